"""The per-phase time limit of kubeloop's pytest plugin, on sessions that hang on purpose: each hang
fails its own test with the stacks of the tasks and threads at that moment, and the session goes on."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.time_limit(120)  # each case starts a pytest subprocess

INI = """
[pytest]
asyncio_mode = auto
asyncio_default_fixture_loop_scope = session
asyncio_default_test_loop_scope = session
"""

# The kit's grace after a cancellation, shortened so that an uncancellable test is interrupted soon.
CONFTEST = "import kubeloop.testing.timelimit as t\nt.GRACE = 1.0\n"

HANGS = '''
import asyncio, pathlib, threading, time
import pytest
import pytest_asyncio

async def _parked():
    await asyncio.Event().wait()

async def _poller():
    while True:
        await asyncio.sleep(0.2)

async def test_hangs_on_the_loop(tmp_path_factory):
    poller = asyncio.create_task(_poller(), name="poller-of-the-test")
    try:
        await _parked()
    finally:
        poller.cancel()
        pathlib.Path("cleaned-up").write_text("yes")

def test_after_an_async_hang():
    pass

def test_hangs_in_a_sync_call():
    stuck = threading.Event()
    threading.Thread(target=stuck.wait, name="stuck-worker", daemon=True).start()
    time.sleep(1000)

async def test_blocks_the_loop():
    time.sleep(1000)  # the loop cannot run the cancellation: interrupted after the grace

@pytest_asyncio.fixture
async def never_ready():
    await _parked()
    yield

async def test_fixture_hangs(never_ready):
    pass

@pytest.mark.time_limit(0)
def test_unlimited():
    time.sleep(2.5)

@pytest.mark.time_limit(30)
async def test_own_longer_limit():
    await asyncio.sleep(2.5)

async def test_last():
    await asyncio.sleep(0)
'''


def test_hangs_fail_with_every_stack_and_the_session_goes_on(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_hangs=HANGS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--time-limit", "2", "-rA")
    out = result.stdout.str()
    result.assert_outcomes(passed=4, failed=3, errors=1)
    for failed in ("test_hangs_on_the_loop", "test_hangs_in_a_sync_call", "test_blocks_the_loop"):
        assert f"FAILED test_hangs.py::{failed}" in out, out
    assert "ERROR test_hangs.py::test_fixture_hangs" in out, out  # its setup ran out of time
    for passed in ("test_after_an_async_hang", "test_unlimited", "test_own_longer_limit", "test_last"):
        assert f"PASSED test_hangs.py::{passed}" in out, out
    # The async hang: both tasks, each down to where it waits, the test's marked; it was cancelled, so its
    # finally ran.
    assert "test_hangs.py::test_hangs_on_the_loop (call) ran past its time limit of 2s (its task was cancelled)" in out
    assert "Task 'poller-of-the-test':" in out and "in _poller" in out and "await asyncio.sleep(0.2)" in out
    assert "in _parked" in out and "(the task the test runs in)" in out
    assert (pytester.path / "cleaned-up").read_text() == "yes"
    # The sync hang: every thread's stack, the stuck worker's too.
    assert "Thread 'stuck-worker' (daemon):" in out and "time.sleep(1000)" in out
    assert ("test_blocks_the_loop (call) ran past its time limit of 2s "
            "(its task was cancelled; it was interrupted)") in out
    assert "test_fixture_hangs (setup) ran past its time limit of 2s" in out


def test_a_bad_limit_is_named(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_one="def test_one():\n    pass\n")
    monkeypatch.setenv("KUBELOOP_TEST_TIME_LIMIT", "soon")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*KUBELOOP_TEST_TIME_LIMIT='soon': give the seconds a test phase may take*"])


def test_the_ini_option_sets_the_limit(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI + "kubeloop_time_limit = 1\n")
    pytester.makepyfile(test_one="import time\n\ndef test_slow():\n    time.sleep(30)\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_slow (call) ran past its time limit of 1s (it was interrupted)*"])
