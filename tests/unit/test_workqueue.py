import asyncio

import pytest

from kubeloop.queue import HIGH, LOW, ExponentialBackoff, ShutDown, WorkQueue


async def test_dedup_while_waiting():
    q = WorkQueue("t")
    q.add("a")
    q.add("a")
    q.add("b")
    assert len(q) == 2
    assert await q.get() == "a"
    assert await q.get() == "b"


async def test_key_never_handed_out_twice_while_processing():
    q = WorkQueue("t")
    q.add("a")
    key = await q.get()
    q.add("a")  # changed while being reconciled
    assert len(q) == 0, "must not be queued while processing"
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    assert not getter.done()
    q.done(key)
    assert await asyncio.wait_for(getter, 1) == "a"


async def test_done_without_new_add_does_not_requeue():
    q = WorkQueue("t")
    q.add("a")
    q.done(await q.get())
    assert len(q) == 0


async def test_priorities_fresh_before_backlog_and_upgrade():
    q = WorkQueue("t")
    for k in ("old1", "old2", "old3"):
        q.add(k, LOW)
    q.add("fresh", HIGH)
    q.add("old3", HIGH)  # an event for a backlog key moves it up
    assert [await q.get() for _ in range(4)] == ["fresh", "old3", "old1", "old2"]


async def test_add_after_and_earliest_timer_wins():
    q = WorkQueue("t")
    q.add_after("a", 0.2)
    q.add_after("a", 0.05)
    assert len(q) == 0
    assert await asyncio.wait_for(q.get(), 1) == "a"
    q.done("a")
    await asyncio.sleep(0.25)
    assert len(q) == 0, "the superseded later timer must not fire"


def test_exponential_backoff_and_forget():
    b = ExponentialBackoff(base=0.005, cap=1.0)
    delays = [b.when("k") for _ in range(10)]
    assert delays[:4] == [0.005, 0.01, 0.02, 0.04]
    assert delays[-1] == 1.0
    b.forget("k")
    assert b.when("k") == 0.005


def test_backoff_stays_at_its_cap_however_often_a_key_fails():
    b = ExponentialBackoff(base=0.005, cap=300.0)
    delays = [b.when("k") for _ in range(2000)]  # 2**1024 is past a float: it used to raise OverflowError
    assert delays[-1] == 300.0 and b.failures("k") == 2000


async def test_rate_limited_requeue_counts_failures():
    q = WorkQueue("t", ExponentialBackoff(base=0.01, cap=1))
    assert q.add_rate_limited("k") == 0.01
    assert q.add_rate_limited("k") == 0.02
    assert await asyncio.wait_for(q.get(), 1) == "k"


async def test_shutdown_releases_waiting_workers():
    q = WorkQueue("t")
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.shutdown()
    with pytest.raises(ShutDown):
        await asyncio.wait_for(getter, 1)


async def test_many_workers_each_key_once():
    q = WorkQueue("t")
    seen: list[str] = []
    running: set[str] = set()

    async def worker():
        while True:
            try:
                key = await q.get()
            except ShutDown:
                return
            assert key not in running
            running.add(key)
            await asyncio.sleep(0.001)
            seen.append(key)
            running.discard(key)
            q.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(4)]
    for i in range(200):
        q.add(f"k{i % 20}")
        await asyncio.sleep(0)
    while len(q) or q.processing:
        await asyncio.sleep(0.01)
    q.shutdown()
    await asyncio.gather(*workers)
    assert set(seen) == {f"k{i}" for i in range(20)}


async def test_an_add_makes_a_key_waiting_out_its_backoff_ready_now():
    # a deletion (or any newer event) must not wait for a backoff earned before it.
    q = WorkQueue("t", ExponentialBackoff(base=10.0, cap=300.0))
    for _ in range(5):
        q.add_rate_limited("k")  # next try in 10 s
    q.add("k")
    assert await asyncio.wait_for(q.get(), 0.5) == "k"


def test_transient_failures_back_off_to_a_short_cap_and_object_failures_do_not():
    q = WorkQueue("t")
    transient = [q.transient_backoff.when("k") for _ in range(30)]
    assert max(transient) <= 8.0 and transient[-1] >= 6.0  # capped, jittered at 75-100 % of the cap
    assert [q.backoff.when("k") for _ in range(30)][-1] == 300.0
    q.forget("k")
    assert q.backoff.failures("k") == 0 and q.transient_backoff.failures("k") == 0


async def test_rate_limited_transient_uses_its_own_schedule():
    q = WorkQueue("t")
    for _ in range(25):
        q.add_rate_limited("k", transient=True)
    assert q.backoff.failures("k") == 0
    assert q.transient_backoff.failures("k") == 25
    assert q.add_rate_limited("k", transient=True) <= 8.0


async def test_a_key_changed_while_processing_comes_back_at_its_best_priority():
    q = WorkQueue("t")
    q.add("busy")
    key = await q.get()
    q.add("backlog", LOW)
    q.add("busy", LOW)  # a resync while it is processed...
    q.add("busy", HIGH)  # ...then a real change: the change's priority wins
    q.done(key)
    assert [await q.get() for _ in range(2)] == ["busy", "backlog"]


async def test_after_shutdown_nothing_comes_back_timers_retries_or_adds():
    q = WorkQueue("t")
    q.add_after("later", 0.05)
    q.add_rate_limited("failed")
    q.shutdown()
    q.add("new")
    await asyncio.sleep(0.1)
    assert len(q) == 0
    with pytest.raises(ShutDown):
        await q.get()


async def test_a_cancelled_worker_passes_its_wake_up_on():
    q = WorkQueue("t")
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    q.add("a")  # wakes the first waiter...
    first.cancel()  # ...which is cancelled before it runs: the key must reach the second
    assert await asyncio.wait_for(second, 1) == "a"


async def test_one_namespace_thousands_of_keys_do_not_delay_another_namespaces_one():
    q = WorkQueue("t")
    for i in range(10_000):
        q.add(f"a/k{i}")
    q.add("b/only")
    first = [await q.get() for _ in range(3)]
    assert "b/only" in first, first
    assert len(q) == 10_000 - 2


async def test_lanes_take_turns_and_each_lane_keeps_its_order():
    q = WorkQueue("t")
    for key in ("a/1", "a/2", "a/3", "b/1", "b/2", "cluster-1", "cluster-2"):
        q.add(key)
    got = [await q.get() for _ in range(7)]
    assert got == ["a/1", "b/1", "cluster-1", "a/2", "b/2", "cluster-2", "a/3"]


async def test_fairness_within_each_priority_and_priorities_first():
    q = WorkQueue("t")
    for i in range(100):
        q.add(f"a/backlog{i}", LOW)
    q.add("b/backlog", LOW)
    for i in range(100):
        q.add(f"a/fresh{i}", HIGH)
    q.add("b/fresh", HIGH)
    got = [await q.get() for _ in range(202)]
    assert got.index("b/fresh") <= 1
    assert all(k.startswith(("a/fresh", "b/fresh")) for k in got[:101]), "every HIGH key before any LOW"
    assert got.index("b/backlog") <= 102


async def test_a_promoted_key_is_served_once_and_its_stale_entry_skipped():
    q = WorkQueue("t")
    q.add("a/x", LOW)
    q.add("a/y", LOW)
    q.add("a/x", HIGH)
    assert await q.get() == "a/x"
    assert await q.get() == "a/y"
    assert len(q) == 0
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0.01)
    assert not getter.done(), "the stale LOW entry of a/x must not be handed out"
    q.shutdown()
    with pytest.raises(ShutDown):
        await getter


async def test_fair_queue_never_hands_out_a_key_being_processed():
    q = WorkQueue("t")
    for i in range(50):
        q.add(f"a/k{i}")
    q.add("b/k")
    handed = [await q.get() for _ in range(10)]
    for key in handed:
        q.add(key)  # changed while processing: dirty, not waiting
    rest = [await q.get() for _ in range(len(q))]
    assert not set(handed) & set(rest)
    for key in handed:
        q.done(key)
    assert len(q) == 10


async def test_a_lane_function_can_group_keys_otherwise():
    q = WorkQueue("t", lane_of=lambda key: "all")
    for key in ("a/1", "a/2", "b/1"):
        q.add(key)
    assert [await q.get() for _ in range(3)] == ["a/1", "a/2", "b/1"]


def test_an_unknown_priority_is_refused_by_name():
    q = WorkQueue("t")
    with pytest.raises(ValueError, match="HIGH .0. or LOW .1."):
        q.add("a/x", 2)


async def test_keys_that_are_not_strings_share_one_lane_with_cluster_scoped_ones():
    q = WorkQueue("t")
    for key in ("a/1", "a/2", ("tuple", 1), "cluster-1", 7):
        q.add(key)
    # lanes "a" and "" (the tuple, "cluster-1" and 7, in arrival order) take turns
    assert [await q.get() for _ in range(5)] == ["a/1", ("tuple", 1), "a/2", "cluster-1", 7]


async def test_a_long_reconcile_dirtied_meanwhile_cools_down_as_long_as_it_took(monkeypatch):
    monkeypatch.setattr("kubeloop.queue.workqueue.COOLDOWN_AFTER", 0.02)
    q = WorkQueue("t")
    q.add("ns/rule")
    key = await q.get()
    await asyncio.sleep(0.1)  # a long reconcile, its sources changing meanwhile
    q.add("ns/rule", LOW)
    q.done(key)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    q.add("ns/rule", HIGH)  # events during the cool-down only mark it (at its best priority)
    q.add("other/one")
    assert await q.get() == "other/one", "another key is not held by the cooling one"
    assert len(q) == 0
    assert await asyncio.wait_for(q.get(), 1) == "ns/rule"
    assert loop.time() - t0 >= 0.09, "back only after as long as its reconcile took"
    q.done("ns/rule")
    assert len(q) == 0, "added once for all its events"


async def test_metered_work_cools_down_if_it_computed_long_not_if_it_only_waited(monkeypatch):
    """A reconcile that waited long on a busy API server (wall time) but computed little is re-queued at
    once; one that computed long cools down as long as it took."""
    monkeypatch.setattr("kubeloop.queue.workqueue.COOLDOWN_AFTER", 0.02)
    q = WorkQueue("t")
    q.add("b/rule")
    key = await q.get()
    await asyncio.sleep(0.1)  # waiting on the API server
    q.add("b/rule")  # the echo of its own write
    q.done(key, computed=0.001)
    assert len(q) == 1, "re-queued at once"
    key = await q.get()
    await asyncio.sleep(0.1)  # took 0.1 s, 0.03 s of it computing
    q.add("b/rule")
    q.done(key, computed=0.03)
    assert len(q) == 0, "cooling down"
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    assert await asyncio.wait_for(q.get(), 1) == "b/rule"
    assert loop.time() - t0 >= 0.09, "as long as it took"


async def test_short_work_is_requeued_at_once_and_cool_down_is_capped(monkeypatch):
    monkeypatch.setattr("kubeloop.queue.workqueue.COOLDOWN_AFTER", 0.05)
    monkeypatch.setattr("kubeloop.queue.workqueue.COOLDOWN_CAP", 0.05)
    q = WorkQueue("t")
    q.add("a")
    key = await q.get()
    q.add("a")
    q.done(key)  # took ~0 s: no cool-down
    assert len(q) == 1
    key = await q.get()
    await asyncio.sleep(0.3)
    q.add("a")
    q.done(key)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    assert await asyncio.wait_for(q.get(), 1) == "a"
    assert loop.time() - t0 < 0.25, "the cap bounds the wait, not the 0.3 s it took"


async def test_shutdown_cancels_cool_downs(monkeypatch):
    monkeypatch.setattr("kubeloop.queue.workqueue.COOLDOWN_AFTER", 0.0)
    q = WorkQueue("t")
    q.add("a")
    key = await q.get()
    q.add("a")
    await asyncio.sleep(0.01)
    q.done(key)
    q.shutdown()
    await asyncio.sleep(0.05)
    with pytest.raises(ShutDown):
        await q.get()
