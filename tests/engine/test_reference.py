"""The engine against the naive reference implementation (reference.py), action by action.

At every step of many random games of every variant, from the start and from random or walled-in
set-ups, both must offer the same legal actions and reach the same position after each one.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import Kind, Phase, State, Termination
from tests.engine import positions, reference
from tests.engine.helpers import (
    VARIANT_NAMES,
    legal,
    random_action,
    random_setup,
    random_setup_lists,
    setup,
    snapshot,
)

SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def cross_check(
    state: State, rng: random.Random, seek_rows: bool = False, seen: Counter | None = None
) -> State:
    """Play a random game from ``state`` on both implementations, comparing at every step."""
    game = reference.Game.from_json(state.to_json())
    seen = Counter() if seen is None else seen
    previous = None  # (player, action)
    while True:
        ours, theirs = legal(state), sorted(game.legal())
        assert ours == theirs, f"legal actions differ in {state.describe()}"
        assert len(set(ours)) == len(ours), "an action offered twice"
        assert snapshot(state) == game.snapshot(), f"positions differ after {state.history[-1:]}"
        if not ours:
            seen[f"end by {state.outcome.termination.value}"] += 1
            return state
        action = random_action(state, rng, seek_rows)
        _note(state, action, previous, seen)
        previous = (state.turn, action)
        state.push(action)
        game.play(str(action))


def row_points(token: str) -> set[str]:
    """The five points of a row token such as ``xc2-g6``."""
    a, b = token[1:].split("-")
    dc = (ord(b[0]) - ord(a[0])) // 4
    dn = (int(b[1:]) - int(a[1:])) // 4
    return {f"{chr(ord(a[0]) + k * dc)}{int(a[1:]) + k * dn}" for k in range(5)}


def _note(state: State, action, previous, seen: Counter) -> None:
    """Count the situations the games went through, to show the comparison is not vacuous."""
    if action.kind == Kind.PASS:
        seen["pass"] += 1
    elif action.kind == Kind.REMOVE_ROW:
        rows = [row_points(t) for t in legal(state)]
        if not state.moved:
            seen["row removed before the move"] += 1
        if any(r & q for r in rows for q in rows if r is not q):
            seen["choice between overlapping rows"] += 1
        elif len(rows) > 1:
            seen["separate rows at once"] += 1
        if previous and previous[0] == state.turn and previous[1].kind == Kind.REMOVE_RING:
            seen["second row in one turn"] += 1
    elif action.kind == Kind.MOVE and state.pool == 1:
        state.push(action)
        if state.next is Phase.REMOVE_ROW:
            seen["row made by the last marker"] += 1
        state.pop()


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), seek_rows=st.booleans())
def test_engine_agrees_with_the_reference_over_random_games(name, seed, seek_rows):
    cross_check(State(name), random.Random(seed), seek_rows)


@pytest.mark.parametrize("name", VARIANT_NAMES)
@SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_engine_agrees_with_the_reference_from_random_set_ups(name, seed):
    rng = random.Random(seed)
    lists = random_setup_lists(name, rng)
    s = State.from_setup(*lists)
    # Both set the position up on their own, removing the rows of the player to act first.
    v, turn, *rest = lists
    assert snapshot(s) == reference.Game.setup(v, turn.label, *rest).snapshot()
    cross_check(s, rng, seek_rows=rng.random() < 0.5)


HAND_MADE = ["BLOCKED_WHITE", "BLOCKED_BOTH", "BLOCKED_BOTH_UNEVEN", "TWO_ROWS", "CROSSING", "BOTH"]


@pytest.mark.parametrize("position", HAND_MADE)
@settings(SETTINGS, max_examples=10)
@given(seed=st.integers(0, 2**32 - 1))
def test_engine_agrees_with_the_reference_from_hand_made_positions(position, seed):
    s = setup(0, **getattr(positions, position))
    cross_check(s, random.Random(seed), seek_rows=True)


def test_the_random_games_reach_every_situation_the_rules_describe():
    """A fixed sweep whose coverage is checked: rows of every kind, passes, both endings."""
    seen: Counter = Counter()
    for name in VARIANT_NAMES:
        for seed in range(12):
            cross_check(State(name), random.Random(seed), seek_rows=seed % 2 == 1, seen=seen)
            rng = random.Random(1000 + seed)
            cross_check(random_setup(name, rng), rng, seek_rows=seed % 3 == 0, seen=seen)
    for position in HAND_MADE:
        for seed in range(3):
            s = setup(0, **getattr(positions, position))
            cross_check(s, random.Random(seed), seek_rows=True, seen=seen)
    for situation in (
        "pass",
        "row removed before the move",
        "choice between overlapping rows",
        "separate rows at once",
        "second row in one turn",
        "row made by the last marker",
        f"end by {Termination.ROWS.value}",
        f"end by {Termination.POOL_EXHAUSTED.value}",
        f"end by {Termination.NO_MOVES.value}",
    ):
        assert seen[situation] > 0, f"no game went through: {situation}"
