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


async def test_computations_take_turns_so_a_pass_of_the_loop_runs_one_slice_not_one_per_computation() -> None:
    """Ten computations at once: between two passes of another task, only one of them computed (one
    slice), in turn; without the shared turn every one of them ran a slice in each pass."""
    log: list[str] = []
    done = False

    def work(name: str) -> Generator[None, None, str]:
        for _ in range(5):
            log.append(name)
            yield
        return name

    async def other() -> None:
        while not done:
            log.append("|")
            await asyncio.sleep(0)

    watcher = asyncio.create_task(other())
    await asyncio.sleep(0)
    results = await asyncio.gather(*(cooperatively(work(f"c{i}"), slice=0) for i in range(10)))
    done = True
    await watcher
    assert results == [f"c{i}" for i in range(10)]
    passes = "".join(x if x == "|" else "." for x in log).strip("|").split("|")
    assert max(len(p) for p in passes) <= 2, passes  # a computation's step, and the next one's first
    # and in turn: the ten interleave rather than run one after another
    order = [x for x in log if x != "|"]
    # (the first may take a second slice before the others have started and stood in line)
    assert set(order[:11]) == {f"c{i}" for i in range(10)}, order[:12]


async def test_a_computation_cancelled_while_waiting_for_its_turn_does_not_keep_it() -> None:
    def forever() -> Generator[None, None, None]:
        while True:
            yield

    def short() -> Generator[None, None, str]:
        yield
        return "done"

    spinning = asyncio.create_task(cooperatively(forever(), slice=0))
    waiting = [asyncio.create_task(cooperatively(forever(), slice=0)) for _ in range(3)]
    for _ in range(5):
        await asyncio.sleep(0)
    for task in waiting:  # cancelled while waiting for, or just handed, the turn
        task.cancel()
    spinning.cancel()
    await asyncio.gather(spinning, *waiting, return_exceptions=True)
    assert await asyncio.wait_for(cooperatively(short(), slice=0), 1) == "done"


async def test_turns_are_fair_across_namespaces_so_a_tenant_with_many_computations_gets_one_line() -> None:
    """Ten computations of namespace a and one of namespace b, inside reconciles: b's steps take every
    other slice (the lanes alternate), so b finishes within its own steps' worth of a's slices, not after
    ten of a's for each of its own."""
    from kubeloop.reconcile import logs

    order: list[str] = []

    def work(name: str, steps: int) -> Generator[None, None, None]:
        for _ in range(steps):
            order.append(name)
            yield

    async def reconcile(key: str, steps: int) -> None:
        logs.current.set({"controller": "c", "object": key, "reconcileID": key})
        await cooperatively(work(key.partition("/")[0], steps), slice=0)

    a = [asyncio.create_task(reconcile(f"a/r{i}", 20)) for i in range(10)]
    await asyncio.sleep(0)  # a's ten are in their line (one of them holds the turn)
    b = asyncio.create_task(reconcile("b/r", 5))
    await b
    for task in a:
        task.cancel()
    await asyncio.gather(*a, return_exceptions=True)
    done_at = max(i for i, name in enumerate(order) if name == "b")
    # b's 5 steps alternate with a's slices (one step each at slice 0): b is done within 2 × 5 + 1 slices
    # of its start; a FIFO turn would have put ten of a's slices before each of b's.
    started = order.index("b")
    assert done_at - started <= 2 * 5, order[started:done_at + 1]
    assert order[started:done_at + 1:2] == ["b"] * 5


async def test_a_meter_in_the_context_adds_up_the_seconds_computed() -> None:
    """What the controller's cool-down reads: the slices' time, not the time spent waiting for turns."""
    import time

    from kubeloop.reconcile.cooperative import Meter, metered

    def busy(seconds: float) -> Generator[None, None, None]:  # computes for ``seconds`` of its own
        spent = 0.0
        while spent < seconds:
            step = time.perf_counter()
            while time.perf_counter() - step < 0.0001:
                pass
            spent += time.perf_counter() - step
            yield

    async def metered_work() -> float:
        meter = Meter()
        metered.set(meter)
        await cooperatively(busy(0.03), slice=0.002)
        await asyncio.gather(cooperatively(busy(0.02)))  # a task it starts is metered too
        return meter.seconds

    async def other() -> None:  # competes for the turns: its time is not counted
        await cooperatively(busy(0.2))

    seconds, _ = await asyncio.gather(metered_work(), other())
    # 50 ms of its own; with any of the other's slices counted it would be more than 0.15 s (the margin
    # is for a busy machine's preemptions inside a slice, which a wall-clock meter counts)
    assert 0.05 <= seconds < 0.15, seconds
