"""Openings: the first ring placements of a game, drawn at random but reproducibly.

A deterministic bot that always starts from the empty board plays the same game against the
same opponent again and again; testers of chess engines start their games from a book of
varied positions instead, each played twice with the colours reversed, so that neither side
profits from an easy or a hard start. YINSH's placements are that book: the first ``plies``
rings are placed at points drawn from the legal ones, with a seeded generator, so the same
seed gives the same opening on any machine.

>>> opening("yinsh", seed=7) == opening("yinsh", seed=7)
True
>>> len(opening("yangsh", seed=1, plies=6))
6
>>> opening("yinsh", seed=1, plies=0)
()
"""

from __future__ import annotations

import random

import engine

#: Rings placed before the bots take over, by default: two each, so every side still places
#: most of its rings itself (YINSH has five each).
DEFAULT_PLIES = 4


def opening(variant: str, seed: int, plies: int = DEFAULT_PLIES) -> tuple[str, ...]:
    """The first ``plies`` ring placements of a game of ``variant``, drawn from the legal ones
    by a generator seeded with ``seed`` (the actions in the notation, e.g. ``("e5", "g7")``).

    Raises ``ValueError`` for an unknown variant, or for more plies than the variant has rings
    to place (an opening never goes past the placements).
    """
    v = engine.variant(variant)
    if not 0 <= plies <= 2 * v.rings:
        raise ValueError(f"an opening of {variant} has 0 to {2 * v.rings} placements, not {plies}")
    rng = random.Random(f"opening:{variant}:{seed}")
    state = engine.State(v)
    actions: list[str] = []
    for _ in range(plies):
        choices = sorted(str(a) for a in state.legal_actions())
        actions.append(str(state.play(rng.choice(choices))))
    return tuple(actions)
