"""Lines that take turns: items wait in one line per lane (a namespace, say), in arrival order, and the
lanes take turns, one item each. The work queue's fairness, for other things that wait: the cooperative
computations' turn and the Events waiting to be sent.

- ``push`` puts an item at the end of its lane's line; a lane new to the lines joins the rotation last.
- ``pop`` takes the first item of the next lane in the rotation, which goes last again if it has more.
- ``waiting(lane)`` is how many wait in that lane's line, ``len`` how many in all.
"""

from __future__ import annotations

import collections
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class FairLines(Generic[T]):
    """See the module docstring."""

    __slots__ = ("_lines", "_rotation", "_count")

    def __init__(self) -> None:
        self._lines: dict[Hashable, collections.deque[T]] = {}
        self._rotation: collections.deque[Hashable] = collections.deque()  # the lanes in _lines
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def waiting(self, lane: Hashable) -> int:
        line = self._lines.get(lane)
        return 0 if line is None else len(line)

    def push(self, lane: Hashable, item: T) -> None:
        line = self._lines.get(lane)
        if line is None:
            line = self._lines[lane] = collections.deque()
            self._rotation.append(lane)
        line.append(item)
        self._count += 1

    def pop(self) -> T:
        """The next lane's first item (``IndexError`` when none waits)."""
        lane = self._rotation.popleft()
        line = self._lines[lane]
        item = line.popleft()
        self._count -= 1
        if line:
            self._rotation.append(lane)  # its next item after the other lanes'
        else:
            del self._lines[lane]
        return item

    def clear(self) -> None:
        self._lines.clear()
        self._rotation.clear()
        self._count = 0
