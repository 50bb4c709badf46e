"""Lorem ipsum from a given ``random.Random``, so that the same seed writes the same garbage."""

from __future__ import annotations

import random

OPENING = "Lorem ipsum dolor sit amet, consectetur adipiscing elit."
WORDS = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et "
    "dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea "
    "commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat nulla pariatur "
    "excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est "
    "laborum"
).split()


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(5, 12))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random) -> str:
    """The classic opening, then a few random sentences: recognisable garbage."""
    return " ".join([OPENING, *(sentence(rng) for _ in range(rng.randint(2, 5)))])
