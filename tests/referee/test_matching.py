"""Perfect matchings of general graphs (arena/referee/matching.py), against trying everything."""

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.referee.matching import perfect_matching, preferred_matching

from .pairings import pairable


@st.composite
def graphs(draw: st.DrawFn) -> tuple[list[int], set[frozenset[int]]]:
    n = draw(st.integers(0, 11))
    pairs = [frozenset(p) for p in itertools.combinations(range(n), 2)]
    edges = draw(st.sets(st.sampled_from(pairs))) if pairs else set()
    return list(range(n)), edges


@given(graphs())
@settings(max_examples=300, deadline=None, database=None)
def test_a_perfect_matching_is_found_exactly_when_one_exists(graph):
    vertices, edges = graph

    def ok(a: int, b: int) -> bool:
        return frozenset((a, b)) in edges

    found = perfect_matching(vertices, ok)
    assert (found is not None) == pairable(vertices, ok)
    if found is not None:
        assert sorted(found) == vertices
        assert all(found[found[v]] == v and ok(v, found[v]) for v in vertices)


@given(graphs(), st.randoms(use_true_random=False))
@settings(max_examples=200, deadline=None, database=None)
def test_the_preferred_matching_gives_each_vertex_in_turn_its_best_possible_partner(graph, rng):
    vertices, edges = graph

    def ok(a: int, b: int) -> bool:
        return frozenset((a, b)) in edges

    prefs = {v: rng.sample(vertices, len(vertices)) for v in vertices}
    pairs = preferred_matching(vertices, ok, prefs.__getitem__)
    assert (pairs is not None) == pairable(vertices, ok)
    if pairs is None:
        return
    free = list(vertices)
    for v, partner in pairs:
        assert v == free[0], "the first unpaired vertex chooses"
        rest = free[1:]
        better = prefs[v][: prefs[v].index(partner)]
        for c in better:  # each partner it prefers would have left the others unpairable
            if c in rest and ok(v, c):
                assert not pairable([x for x in rest if x != c], ok)
        free = [x for x in rest if x != partner]
    assert not free


def test_an_odd_cycle_is_handled_as_a_blossom():
    # A triangle 0-1-2 with tails 2-3 and 0-4-5: the one perfect matching is 0-1, 2-3, 4-5.
    edges = {frozenset(p) for p in [(0, 1), (1, 2), (2, 0), (2, 3), (0, 4), (4, 5)]}
    found = perfect_matching(list(range(6)), lambda a, b: frozenset((a, b)) in edges)
    assert found == {0: 1, 1: 0, 2: 3, 3: 2, 4: 5, 5: 4}
