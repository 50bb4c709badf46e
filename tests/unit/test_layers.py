"""The architecture, checked: which package of kubeloop may import which (the folder list is the
diagram, and layers only point down), and the bundled operators use only the public API (``kubeloop``
and ``kubeloop.testing``), as any user would.

Every import counts, also those under ``if TYPE_CHECKING:`` or inside a function: a type-level or lazy
dependency is still a dependency. ``MAY_IMPORT`` lists exactly the edges in use: a new edge is a design
decision (add it in the same change, and say why in docs/ARCHITECTURE.md), and an edge no longer used
comes out of it.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import kubeloop
import kubeloop.testing

ROOT = Path(kubeloop.__file__).parent

# Each part of kubeloop → the parts it imports (besides itself and other libraries), bottom-up: exactly
# the edges in use, so that the table is the diagram as it is.
MAY_IMPORT: dict[str, set[str]] = {
    "metrics": set(),
    "clock": set(),  # the loop's clock and wall time, virtual under the test kit: every layer reads it
    "lazy_names": set(),  # a package's names loaded on first use (start-up CPU)
    "loopthread": set(),  # a server's own thread and loop: the manager's probes and the webhook server
    "client": {"metrics", "clock"},
    "watch": {"client", "clock"},
    "cache": {"client", "watch"},
    "queue": {"metrics", "clock"},
    "resources": {"client", "lazy_names"},
    "helpers": {"client", "resources", "clock"},
    "reconcile": {"client", "cache", "helpers"},
    "controller": {"client", "cache", "queue", "reconcile", "helpers", "metrics", "clock"},
    # Scale-out: its Leases go through the client; it drives the controllers and primary informers it splits.
    "lease": set(),  # how long a Lease holds: leader election's and each shard member's
    "sharding": {"client", "cache", "controller", "metrics", "clock", "lease"},
    "pki": set(),  # a CA and the certificates it issues: the local control plane's and the webhook server's
    "webhooks": {"client", "pki", "metrics", "resources", "loopthread"},
    "manager": {"client", "cache", "reconcile", "controller", "helpers", "resources", "metrics", "webhooks",
                "sharding", "clock", "loopthread", "lease"},
    "settings": set(),
    "builder": {"client", "reconcile", "controller", "manager", "resources", "settings", "webhooks"},
    "envtest": {"pki"},
    "packaging": {"client", "envtest", "helpers", "resources"},
    "scaffold": {"packaging"},
    # The test kit runs operators on a local control plane, so it sits above the runtime and the builder.
    "testing": {"client", "controller", "manager", "builder", "envtest", "helpers", "resources", "webhooks",
                "clock"},
    # ``kubeloop`` itself (``__init__``) is the public API: it re-exports from the parts below it.
    "(top)": {"client", "cache", "reconcile", "controller", "manager", "builder", "helpers", "resources",
              "settings", "metrics", "webhooks", "lazy_names", "clock"},
}
TOP_ONLY = {"cli", "operators"}  # checked separately: the command line may import anything; operators below


def _part(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return "(top)" if parts == ("__init__",) else parts[0]


def _imports(path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) of every absolute import of kubeloop in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "kubeloop" or node.module.startswith("kubeloop."):
                out.append((node.lineno, node.module, [a.name for a in node.names]))
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, []) for a in node.names if a.name.startswith("kubeloop")]
    return out


def _targets(module: str, names: list[str]) -> set[str]:
    parts = module.split(".")
    if len(parts) > 1:
        return {parts[1]}
    subpackages = {p.stem for p in ROOT.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
    names = [n for n in names if not n.startswith("__")]  # ``__version__`` is metadata, not a layer
    if not names and module == "kubeloop":
        return set()
    return {n if n in subpackages else "(top)" for n in names}


def test_every_part_is_in_the_contract() -> None:
    parts = {_part(p) for p in ROOT.rglob("*.py")}
    assert parts - TOP_ONLY == set(MAY_IMPORT), "a new part of kubeloop: place it in MAY_IMPORT"


def _edges() -> dict[str, dict[str, list[str]]]:
    """Each part (but the top-only ones) → each part it imports → where (``path:line imports module``)."""
    edges: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in ROOT.rglob("*.py"):
        part = _part(path)
        if part in TOP_ONLY:
            continue
        for line, module, names in _imports(path):
            for target in _targets(module, names) - {part}:
                edges[part][target].append(f"{path.relative_to(ROOT.parent)}:{line} imports {module} ({target})")
    return edges


def test_layers_only_point_down() -> None:
    edges = _edges()
    wrong = [where for part, targets in edges.items() for target, places in targets.items()
             if target not in MAY_IMPORT[part] for where in places]
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_the_contract_lists_only_edges_in_use() -> None:
    edges = _edges()
    unused = [f"{part} -> {target}" for part, allowed in MAY_IMPORT.items() for target in sorted(allowed)
              if target not in edges.get(part, {})]
    assert not unused, "edges nothing imports: remove them from MAY_IMPORT:\n" + "\n".join(unused)


def test_the_contract_has_no_cycles() -> None:
    seen: dict[str, str] = {}

    def visit(part: str, path: tuple[str, ...]) -> None:
        assert part not in path, f"cycle: {' -> '.join((*path, part))}"
        if seen.get(part) == "done":
            return
        for target in MAY_IMPORT.get(part, set()):
            visit(target, (*path, part))
        seen[part] = "done"

    for part in MAY_IMPORT:
        visit(part, ())


def test_the_bundled_operators_use_only_the_public_api() -> None:
    public = {"kubeloop": set(kubeloop.__all__), "kubeloop.testing": set(kubeloop.testing.__all__)}
    wrong = []
    for path in (ROOT / "operators").rglob("*.py"):
        for line, module, names in _imports(path):
            if module.startswith("kubeloop.operators"):
                continue
            allowed = public.get(module)
            if module == "kubeloop" and not names:  # ``import kubeloop``: the public namespace itself
                continue
            if allowed is None or not names or set(names) - allowed:
                wrong.append(f"{path.relative_to(ROOT.parent)}:{line} imports {module} {names}")
    assert not wrong, "the operators reach past the public API:\n" + "\n".join(wrong)


def test_the_public_api_resolves() -> None:
    for name in kubeloop.__all__:
        assert getattr(kubeloop, name) is not None, name
    for name in kubeloop.testing.__all__:
        assert getattr(kubeloop.testing, name) is not None, name
