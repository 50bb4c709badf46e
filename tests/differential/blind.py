"""What the blind suites share: one sequence played on both backends and its differences printed (never a
failure), then the suite judged on its total step agreement. A blind suite is written by a session that
did not read the fake API server, the sequences it was tuned on or its documentation, and checked each step
against the real server only (``tests/differential/play_real.py``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from tests.differential.compare import compare
from tests.differential.harness import Backend, Step

GOAL = 95.0  # issue 31's goal for the fake's step agreement on a suite it was not tuned on


def say(text: str) -> None:
    print(text, file=sys.__stderr__, flush=True)


@dataclass
class BlindSuite:
    """One suite's sequences and what they gave; ``floor`` is the agreement below which the fake got worse."""

    label: str
    sequences: dict[str, list[Step]]
    floor: float
    results: dict[str, tuple[int, list[str]]] = field(default_factory=dict)  # name → (steps, differences)

    async def play(self, name: str, fake: Backend, real: Backend) -> None:
        steps = self.sequences[name]
        diffs = await compare(name, steps, fake, real)
        self.results[name] = (len(steps), diffs)
        say(f"\n[{self.label}] {name}: {len(steps) - len(diffs)}/{len(steps)} steps agree")
        for diff in diffs:  # pytest -s shows compare's whole output; this is the head of each
            say(f"[{self.label}] {name}: {diff[:2000]}")

    def rate(self) -> float:
        absent = [name for name in self.sequences if name not in self.results]
        assert not absent, f"{len(absent)} {self.label} sequence(s) did not run (or errored): {', '.join(absent)}"
        total = sum(n for n, _ in self.results.values())
        assert total, "no steps ran"
        return 100.0 * sum(n - len(d) for n, d in self.results.values()) / total

    def report_and_floor(self) -> None:
        rate = self.rate()
        rows = ["", f"{self.label} differential suite: agreement per sequence"]
        for name, (n, diffs) in self.results.items():
            rows.append(f"  {name:<48} {n - len(diffs):>3}/{n:<3} {100.0 * (n - len(diffs)) / n:5.1f} %")
        steps = sum(n for n, _ in self.results.values())
        agreeing = sum(n - len(d) for n, d in self.results.values())
        whole = sum(not d for _, d in self.results.values())
        rows.append(f"  total: {whole}/{len(self.results)} sequences and {agreeing}/{steps} steps agree "
                    f"({rate:.1f} %)")
        say("\n".join(rows))
        assert rate >= self.floor, f"{self.label} step agreement {rate:.1f} % fell below its floor of {self.floor} %"

    def goal(self) -> None:
        rate = self.rate()
        assert rate >= GOAL, f"{self.label} step agreement {rate:.1f} % < {GOAL} %"
