"""The random bot: a legal action chosen uniformly, reproducible from the game's seed."""

from __future__ import annotations

import random

import yinshbot

_rng: random.Random | None = None


def choose(request: yinshbot.Request) -> str:
    global _rng
    if _rng is None:
        _rng = random.Random(f"{request.seed}/{request.color}")
    return _rng.choice(request.actions)


def reset() -> None:
    """Forget the generator (a new game starts)."""
    global _rng
    _rng = None


if __name__ == "__main__":
    yinshbot.main(choose, on_start=lambda hello: reset())
