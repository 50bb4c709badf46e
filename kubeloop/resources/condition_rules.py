"""metav1.Condition's rules (k8s.io/apimachinery/pkg/apis/meta/v1/types.go), in one place: the CRD
schema of ``Conditions`` carries them, so the API server enforces on a CRD's conditions what it enforces
on the built-in ones, and ``kubeloop.helpers.conditions`` checks them before writing. No imports: an
operator on plain dicts reads them without loading pydantic."""

TYPE_MAX, REASON_MAX, MESSAGE_MAX = 316, 1024, 32768
TYPE_PATTERN = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
# Ours: the built-ins have no bound on the list; a CRD list without maxItems leaves its size, and the
# cost of CEL rules over it, to the 3 MiB object limit.
CONDITIONS_MAX = 64
