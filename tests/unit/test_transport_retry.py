"""How long the client waits before retrying a throttled request (see ``_retry_delay``)."""

from __future__ import annotations

from kubeloop.client.transport import _retry_delay


def test_retry_after_is_a_floor_and_a_crowd_is_spread_out() -> None:
    # 60 requests rejected together with the same Retry-After: 1 (what API Priority and Fairness sends).
    delays = [_retry_delay(1, 1.0) for _ in range(60)]
    assert min(delays) >= 1.0, "retried before the server's Retry-After"
    assert max(delays) - min(delays) > 0.02, "the crowd comes back in lockstep"


def test_retries_of_a_throttled_request_back_off_further_each_time() -> None:
    first = [_retry_delay(1, 1.0) for _ in range(50)]
    sixth = [_retry_delay(6, 1.0) for _ in range(50)]
    assert min(sixth) > max(first)


def test_without_retry_after_the_delay_is_the_plain_capped_backoff() -> None:
    assert all(0.1 <= _retry_delay(1, None) <= 0.2 for _ in range(50))
    assert all(5.0 <= _retry_delay(20, None) <= 10.0 for _ in range(50))
