"""When rounds happen and what their dice are: time windows, the round clock and seeded randomness."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from kubeloop import clock
from kubeloop.operators.blackadder.models import WEEKDAYS


def parse_time_range(text: str) -> tuple[time, time]:
    """``"22:00-06:00"`` → (22:00, 06:00)."""
    start, _, end = text.partition("-")
    return time.fromisoformat(start.strip()), time.fromisoformat(end.strip())


def in_time_range(now: time, start: time, end: time) -> bool:
    """Half-open [start, end); a range whose end is not after its start wraps past midnight, so
    equal ends cover the whole day (as chaoskube reads them)."""
    if start < end:
        return start <= now < end
    return now >= start or now < end


def excluded_window(now: datetime, weekdays: Sequence[str], times_of_day: Sequence[str],
                    timezone: str) -> str | None:
    """Why ``now`` is inside an excluded window (a message), or None. A bad timezone raises
    (``ZoneInfoNotFoundError``, a ``KeyError``): the caller must stop rather than guess."""
    local = now.astimezone(ZoneInfo(timezone))
    day = WEEKDAYS[local.weekday()]
    if day in weekdays:
        return f"{day} is an excluded weekday ({timezone})"
    clock = local.time().replace(tzinfo=None)
    for text in times_of_day:
        if in_time_range(clock, *parse_time_range(text)):
            return f"{clock.strftime('%H:%M')} is within excluded time {text} ({timezone})"
    return None


def next_round_at(last_round: datetime | None, pause_seconds: int, now: datetime) -> datetime:
    """Rounds are pauseSeconds apart; the first one is due at once."""
    return now if last_round is None else last_round + timedelta(seconds=pause_seconds)


def dice(seed: int, round_no: int, *scope: str) -> random.Random:
    """The random source of one round (and mode, and object): a pure function of the seed and the
    round number, so a recorded seed replays every choice. Separate scopes keep the modes from
    shifting each other's draws when one is switched on or off."""
    return random.Random("/".join([str(seed), str(round_no), *scope]))


def chance(rng: random.Random, eagerness: int) -> bool:
    """True with probability eagerness% (eagerness 100 always hits)."""
    return rng.random() * 100 < eagerness


def utcnow() -> datetime:
    return clock.now()


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_rfc3339(text: str | None) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
