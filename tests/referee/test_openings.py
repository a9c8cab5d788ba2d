"""Openings: seeded, legal, varied ring placements."""

import pytest

import engine
from arena.referee.openings import DEFAULT_PLIES, opening


@pytest.mark.parametrize("variant", list(engine.VARIANTS))
def test_an_opening_is_legal_placements_only(variant):
    for seed in range(20):
        actions = opening(variant, seed)
        assert len(actions) == DEFAULT_PLIES
        state = engine.State(variant)
        for token in actions:
            assert state.play(token).kind.name == "PLACE"


def test_the_same_seed_gives_the_same_opening_and_seeds_give_many():
    assert opening("yinsh", 42) == opening("yinsh", 42)
    assert len({opening("yinsh", seed) for seed in range(100)}) > 95


def test_yangsh_openings_never_use_the_corners():
    corners = set(engine.VARIANTS["yangsh"].no_placement)
    used = {a for seed in range(200) for a in opening("yangsh", seed, plies=10)}
    assert corners and not used & corners


@pytest.mark.parametrize("plies", [-1, 11])
def test_an_opening_stays_within_the_placements(plies):
    with pytest.raises(ValueError, match="0 to 10 placements"):
        opening("yinsh", 1, plies=plies)
