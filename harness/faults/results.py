"""One row of the reliability table: what a scenario measured for one operator under one fault."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# The bound every scenario is held to: after its fault ends (or the scenario's last write to an object,
# if later), every object converges within this many seconds. A row past it fails, even with nothing lost.
CONVERGENCE_BOUND_S = 30.0


@dataclass
class Row:
    scenario: str
    operator: str
    fault: str
    objects: int = 0
    never_converged: int = 0
    duplicates: int = 0
    converge_p99_s: float | None = None  # per object: from max(fault end, its last write) to converged
    converge_max_s: float | None = None
    recovery_s: float | None = None  # from the end of the fault until every object converged
    restarts: int = 0  # operator restarts the scenario caused (kills)
    crashes: int = 0  # operator exits nobody asked for
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    seconds: float = 0.0  # wall time of the scenario
    seed: int | None = None  # the seed of every random choice of this run

    @property
    def within_bound(self) -> bool:
        return self.converge_max_s is None or self.converge_max_s <= CONVERGENCE_BOUND_S

    @property
    def ok(self) -> bool:
        return (self.error is None and self.never_converged == 0 and self.duplicates == 0 and self.crashes == 0
                and self.within_bound)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ok"] = self.ok
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Row:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)
