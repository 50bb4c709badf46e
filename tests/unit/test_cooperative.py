"""``kubeloop.cooperatively`` and ``kubeloop.to_completion``: a computation written as steps returns the
same result either way, and driven cooperatively it hands the loop to other work between slices."""

from __future__ import annotations

import asyncio
from collections.abc import Generator

from kubeloop import cooperatively, to_completion


def squares(n: int, seen: list[int]) -> Generator[None, None, int]:
    total = 0
    for i in range(n):
        seen.append(i)
        total += i * i
        yield
    return total


def test_to_completion_returns_what_the_steps_return() -> None:
    seen: list[int] = []
    assert to_completion(squares(100, seen)) == sum(i * i for i in range(100))
    assert seen == list(range(100))


async def test_cooperatively_returns_the_same_and_lets_other_work_run_between_slices() -> None:
    seen: list[int] = []
    interleaved: list[int] = []  # how many steps had run each time the other task got the loop
    done = False

    async def other() -> None:
        while not done:
            interleaved.append(len(seen))
            await asyncio.sleep(0)

    task = asyncio.create_task(other())
    await asyncio.sleep(0)  # the other task starts
    result = await cooperatively(squares(50, seen), slice=0)  # slice 0: the loop at every step
    done = True
    await task
    assert result == sum(i * i for i in range(50))
    # The other task ran while the steps were under way, not only before and after them.
    assert any(0 < k < 50 for k in interleaved)


async def test_a_computation_without_steps_returns_at_once() -> None:
    def nothing() -> Generator[None, None, str]:
        return "done"
        yield  # a generator all the same

    assert await cooperatively(nothing()) == "done"
    assert to_completion(nothing()) == "done"
