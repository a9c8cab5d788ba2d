"""The competition formats (arena/referee/formats.py): properties over random entry counts and
random results, hand-computed tables, and the specs that cannot be played."""

import doctest
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena import stats
from arena.referee import formats, matching
from arena.referee.formats import (
    RESULTS,
    Event,
    Format,
    FormatError,
    FormatSpec,
    Game,
    Round,
    knockout_size,
    max_swiss_rounds,
    swiss_rounds,
)
from arena.referee.schedule import round_robin

from .pairings import pairable

SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def play_out(event: Event, draw: Callable[[Game], str], check: Callable[[Event], None]) -> None:
    """Advance ``event`` to its end, each game's result from ``draw``; ``check(event)`` before
    each step is made."""
    while not event.finished:
        check(event)
        made = event.advance()
        assert made, "an unfinished event with nothing pending made nothing"
        for game in event.pending():
            event.record(game.number, draw(game))


def pairings_of(r: Round) -> set[frozenset[int]]:
    return {frozenset((g.white, g.black)) for g in r.games}


# ----------------------------------------------------------------------------- round robins


@pytest.mark.parametrize("players", range(2, 10))
@pytest.mark.parametrize("games", [1, 2, 3])
def test_round_robins_play_the_schedulers_rounds_all_at_once(players, games):
    for fmt, per_pair in (("round-robin", games), ("double-round-robin", 2 * games)):
        event = Event(FormatSpec(fmt, players, games))
        made = event.advance()
        schedule = round_robin(players, per_pair)
        assert [(g.number, g.round, g.white, g.black) for g in event.games] == [
            (p.number, p.round, p.white, p.black) for p in schedule
        ]
        assert [r.number for r in made] == sorted({p.round for p in schedule})
        assert all(not r.byes for r in made)  # sitting out is not a bye
        # Games share an opening exactly when the scheduler's legs say so.
        legs = {p.number: p.leg for p in schedule}
        for a in event.games:
            for b in event.games:
                assert (a.leg == b.leg) == (legs[a.number] == legs[b.number])
        assert event.spec.round_count == len(made)
        assert event.spec.max_games == len(schedule)
        assert event.advance() == []  # nothing more, and not finished until played
        assert not event.finished


@given(st.integers(2, 8), st.integers(1, 3), st.data())
@SETTINGS
def test_round_robin_standings_are_the_statistics_standings(players, games, data):
    event = Event(FormatSpec("round-robin", players, games))
    event.advance()
    for g in event.games:
        event.record(g.number, data.draw(st.sampled_from(RESULTS)))
    assert event.finished
    mine = event.standings()
    theirs = stats.standings(
        list(range(players)), [(g.white, g.black, r, 1) for g, r in event.played()]
    )
    assert [(s.player, s.points, s.sonneborn_berger) for s in mine] == [
        (s.player, s.points, pytest.approx(s.tiebreak)) for s in theirs
    ]


# ----------------------------------------------------------------------------- gauntlet


@pytest.mark.parametrize("players", range(2, 7))
@pytest.mark.parametrize("games", [1, 2, 3])
def test_a_gauntlet_is_the_seed_against_each_other_player(players, games):
    event = Event(FormatSpec("gauntlet", players, games))
    made = event.advance()
    assert [r.number for r in made] == list(range(1, players))
    for r in made:
        assert pairings_of(r) == {frozenset((0, r.number))}
        assert len(r.games) == games
        # The seed has White first in odd rounds; the colours alternate.
        first, second = (0, r.number) if r.number % 2 else (r.number, 0)
        assert [g.white for g in r.games] == [(first, second)[k % 2] for k in range(games)]
    whites = sum(g.white == 0 for g in event.games)
    assert abs(2 * whites - games * (players - 1)) <= 1  # the seed's colours: off by one at most
    assert Counter(p for g in event.games for p in (g.white, g.black))[0] == games * (players - 1)
    for g in event.games:
        event.record(g.number, "white")
    assert event.finished and event.advance() == []


# ----------------------------------------------------------------------------- Swiss


def swiss_check(event: Event) -> None:
    """What must hold before each Swiss round is made, then of the round made (it makes it on a
    copy): no repeat, one game per player, at most one bye each, the bye's and the colours'
    rules."""
    spec = event.spec
    copy = Event(spec, list(event.rounds), dict(event.results))
    before = set().union(*(pairings_of(r) for r in copy.rounds))
    byes_before = {p for r in copy.rounds for p in r.byes}
    points: Counter[int] = Counter()
    diff: Counter[int] = Counter()
    for g, result in copy.played():
        points[g.white] += stats.points(result, "white")
        points[g.black] += stats.points(result, "black")
        diff[g.white] += 1
        diff[g.black] -= 1
    for p in byes_before:
        points[p] += spec.games
    ranking = sorted(range(spec.players), key=lambda p: (-points[p], p))

    (made,) = copy.advance()
    pairs = pairings_of(made)
    assert not pairs & before, "a pairing repeated"
    seated = [p for pair in pairs for p in pair]
    assert len(seated) == len(set(seated)), "a player plays twice in a round"
    assert sorted(seated + list(made.byes)) == list(range(spec.players))
    assert Counter(frozenset((g.white, g.black)) for g in made.games) == dict.fromkeys(
        pairs, spec.games
    )
    assert len(made.byes) == spec.players % 2
    assert not set(made.byes) & byes_before, "a second bye"

    def fresh(a: int, b: int) -> bool:
        return frozenset((a, b)) not in before

    if made.byes:
        # The lowest-ranked player without a bye whose absence leaves the others pairable.
        (bye,) = made.byes
        for p in reversed(ranking):
            if p in byes_before:
                continue
            if p == bye:
                break
            assert not pairable([q for q in ranking if q != p], fresh), (
                f"the bye went to {bye}, but {p} was lower and could have had it"
            )
    after = Counter(diff)
    for g in made.games:
        after[g.white] += 1
        after[g.black] -= 1
    if spec.games % 2 == 0:
        assert all(after[p] == diff[p] == 0 for p in range(spec.players))
    elif any(abs(after[p]) > 1 for p in range(spec.players)):

        def balanced(a: int, b: int) -> bool:
            return fresh(a, b) and any(
                abs(diff[a] + s) <= 1 and abs(diff[b] - s) <= 1 for s in (1, -1)
            )

        assert not pairable([p for p in ranking if p not in made.byes], balanced), (
            "colours went off by two although a balanced pairing existed"
        )
    # Boards are in ranking order, and each mini-match alternates its colours.
    tops = [min(g.white, g.black, key=ranking.index) for g in made.games]
    assert [ranking.index(t) for t in tops] == sorted(ranking.index(t) for t in tops)
    by_pair = defaultdict(list)
    for g in made.games:
        by_pair[frozenset((g.white, g.black))].append(g.white)
    for whites in by_pair.values():
        assert all(a != b for a, b in itertools.pairwise(whites))


@given(st.integers(2, 11), st.integers(1, 3), st.data())
@SETTINGS
def test_swiss_rounds_repeat_no_pairing_and_follow_the_bye_and_colour_rules(players, games, data):
    rounds = data.draw(st.integers(1, max_swiss_rounds(players)), label="rounds")
    event = Event(FormatSpec("swiss", players, games, rounds))
    play_out(event, lambda g: data.draw(st.sampled_from(RESULTS)), swiss_check)
    assert [r.number for r in event.rounds] == list(range(1, rounds + 1))
    assert event.advance() == [] and event.finished
    assert all(len(r) == 1 for r in event.byes().values())


@given(st.integers(12, 40), st.data())
@settings(SETTINGS, max_examples=10)
def test_big_swisses_can_always_be_paired_to_their_last_round(players, data):
    event = Event(FormatSpec("swiss", players, 1, max_swiss_rounds(players)))
    seen: set[frozenset[int]] = set()

    def check(e: Event) -> None:
        for r in e.rounds[len(e.rounds) - 1 :]:
            assert not pairings_of(r) & seen
            seen.update(pairings_of(r))

    play_out(event, lambda g: data.draw(st.sampled_from(RESULTS)), check)
    check(event)


def test_swiss_round_one_pairs_the_top_half_against_the_bottom_half():
    event = Event(FormatSpec("swiss", 8, 2, 3))
    (r,) = event.advance()
    assert [(g.white, g.black) for g in r.games[::2]] == [(0, 4), (5, 1), (2, 6), (7, 3)]


def swiss(rounds: list[tuple[list[tuple[int, int, str]], tuple[int, ...]]]) -> Event:
    """A Swiss of five players and single games, from hand-made rounds: (white, black,
    result) and the byes."""
    made, results, number = [], {}, 0
    for r, (games, byes) in enumerate(rounds, 1):
        out = []
        for white, black, result in games:
            number += 1
            out.append(Game(number, r, white, black, 0, number))
            results[number] = result
        made.append(Round(r, tuple(out), byes))
    return Event(FormatSpec("swiss", 5, 1, 3), made, results)


def test_swiss_standings_are_the_hand_computed_ones():
    a, b, c, d, e = range(5)
    event = swiss(
        [
            ([(a, b, "white"), (c, d, "draw")], (e,)),  # a beats b, c and d draw, e has a bye
            ([(e, a, "black"), (b, c, "black")], (d,)),  # a beats e, c beats b, d has a bye
        ]
    )
    # Points: a 2, c 1.5, d 1.5 (a draw and a bye), e 1 (a bye), b 0.
    # Buchholz: a: b 0 + e 1 = 1; b: a 2 + c 1.5 = 3.5; c: d 1.5 + b 0 = 1.5; d: c 1.5;
    # e: a 2. Sonneborn-Berger: a: 1 * 0 + 1 * 1 = 1; c: 0.5 * 1.5 + 1 * 0 = 0.75;
    # d: 0.5 * 1.5 = 0.75; b, e: 0. Head-to-head (against those level on points): c and d
    # drew: 0.5 each.
    table = [
        (s.rank, s.player, s.points, s.buchholz, s.sonneborn_berger, s.head_to_head, s.byes)
        for s in event.standings()
    ]
    assert table == [
        (1, a, 2, 1, 1, 0, 0),
        (2, c, 1.5, 1.5, 0.75, 0.5, 0),
        (3, d, 1.5, 1.5, 0.75, 0.5, 1),
        (4, e, 1, 2, 0, 0, 1),
        (5, b, 0, 3.5, 0, 0, 0),
    ]


def test_swiss_ties_are_broken_by_buchholz_then_sonneborn_berger():
    a, b, c, d, e = range(5)
    event = swiss(
        [
            ([(a, b, "white"), (c, d, "white")], (e,)),
            ([(a, c, "black"), (b, e, "white")], (d,)),
        ]
    )
    # Points: c 2; a, b, d, e 1. Buchholz: a: b 1 + c 2 = 3; b: a 1 + e 1 = 2; d: c 2 = 2;
    # e: b 1 = 1. Sonneborn-Berger of b and d (level on Buchholz): b beat e, 1 * 1; d: 0.
    table = [(s.player, s.points, s.buchholz, s.sonneborn_berger) for s in event.standings()]
    assert table == [(c, 2, 2, 2), (a, 1, 3, 1), (b, 1, 2, 1), (d, 1, 2, 0), (e, 1, 1, 0)]


def test_swiss_head_to_head_breaks_a_tie_that_buchholz_and_sonneborn_berger_leave():
    event = Event(
        FormatSpec("swiss", 4, 1, 3),
        [
            Round(1, (Game(1, 1, 0, 2, leg=1), Game(2, 1, 1, 3, leg=2))),
            Round(2, (Game(3, 2, 3, 0, leg=3), Game(4, 2, 2, 1, leg=4))),
            Round(3, (Game(5, 3, 1, 0, leg=5), Game(6, 3, 3, 2, leg=6))),
        ],
        {1: "white", 2: "white", 3: "white", 4: "black", 5: "draw", 6: "draw"},
    )
    # Points: 1 2.5; 0 and 3 1.5; 2 0.5. Buchholz of 0: 0.5 + 1.5 + 2.5 = 4.5, of 3: 2.5 +
    # 1.5 + 0.5 = 4.5. Sonneborn-Berger of 0: 1 * 0.5 + 0 + 0.5 * 2.5 = 1.75, of 3: 0 +
    # 1 * 1.5 + 0.5 * 0.5 = 1.75. Head-to-head: 3 beat 0.
    table = [
        (s.rank, s.player, s.points, s.buchholz, s.sonneborn_berger, s.head_to_head)
        for s in event.standings()
    ]
    assert table == [
        (1, 1, 2.5, 3.5, 2.75, 0),
        (2, 3, 1.5, 4.5, 1.75, 1),
        (3, 0, 1.5, 4.5, 1.75, 0),
        (4, 2, 0.5, 5.5, 0.75, 0),
    ]


def test_a_swiss_bye_is_worth_a_won_mini_match():
    event = Event(FormatSpec("swiss", 3, 2, 1))
    (r,) = event.advance()
    assert r.byes == (2,)
    table = {s.player: s for s in event.standings()}
    assert table[2].points == 2 and table[2].games == 0 and table[2].byes == 1


# ----------------------------------------------------------------------------- knockout


def knockout_check(event: Event) -> None:
    for r in event.rounds:
        assert all(g.round == r.number for g in r.games)
        assert (r.stage > 0) == all(g.tiebreak for g in r.games)


@given(st.integers(2, 20), st.sampled_from([2, 4]), st.integers(0, 3), st.data())
@SETTINGS
def test_a_knockout_bracket_is_consistent_with_its_results(players, games, most, data):
    spec = FormatSpec("knockout", players, games, max_tiebreaks=most)
    event = Event(spec)
    # Mostly colour wins, so that ties are often level and go to tie-breaks.
    outcomes = st.sampled_from(["white", "white", "black", "draw"])
    play_out(event, lambda g: data.draw(outcomes), knockout_check)
    bracket = event.bracket()
    size = knockout_size(players)
    assert len(bracket) == spec.round_count == size.bit_length() - 1
    assert [len(r) for r in bracket] == [size >> k for k in range(1, len(bracket) + 1)]
    # Byes: only in round 1, to the top seeds.
    byes = [(r.number, p) for r in event.rounds for p in r.byes]
    assert sorted(byes) == [(1, p) for p in range(size - players)]
    assert [t.high for t in bracket[0] if t.low is None] == [
        p for p in (t.high for t in bracket[0]) if p < size - players
    ]
    for number, ties in enumerate(bracket, 1):
        winners = [t.winner for t in ties]
        assert all(w in (t.high, t.low) for w, t in zip(winners, ties, strict=True))
        if number < len(bracket):  # every winner plays the next round, nobody else does
            nxt = bracket[number]
            assert sorted(p for t in nxt for p in (t.high, t.low)) == sorted(winners)
            assert all(t.low is not None for t in nxt)
        for t in ties:
            check_tie(spec, event, t)
    champions = [t.winner for t in bracket[-1]]
    assert champions == [event.champion] and event.champion is not None
    assert event.standings()[0].player == event.champion
    assert event.finished and event.advance() == []


def check_tie(spec: FormatSpec, event: Event, t) -> None:
    if t.low is None:
        assert t.decided_by == "bye" and t.winner == t.high and not t.games
        return
    assert t.high < t.low

    def score(games: list[Game]) -> tuple[float, float]:
        h = sum(
            stats.points(event.results[g.number], "white" if g.white == t.high else "black")
            for g in games
        )
        return h, len(games) - h

    main = [g for g in t.games if not g.tiebreak]
    assert len(main) == spec.games
    assert [g.white for g in main] == [t.high, t.low] * (spec.games // 2)
    tiebreaks = [g for g in t.games if g.tiebreak]
    assert [g.tiebreak for g in tiebreaks] == list(range(1, len(tiebreaks) + 1))
    assert [g.label for g in tiebreaks] == [f"{t.round}.{k}" for k in range(1, len(tiebreaks) + 1)]
    stages = [tiebreaks[i : i + 2] for i in range(0, len(tiebreaks), 2)]
    assert len(stages) == t.tiebreaks <= spec.max_tiebreaks
    # A tie-break only when everything before it was level; the decider only after
    # max_tiebreaks level ones.
    level_so_far = True
    for chunk in [main, *stages]:
        assert level_so_far, "games were played in a tie already decided"
        h, low = score(chunk)
        level_so_far = h == low
    if level_so_far:
        assert t.decided_by == "decider" and t.winner == t.high
        assert t.tiebreaks == spec.max_tiebreaks
    else:
        h, low = score(stages[-1] if stages else main)
        assert t.winner == (t.high if h > low else t.low)
        assert t.decided_by == ("tie-break" if stages else "games")


def test_a_knockout_bracket_by_hand_tie_break_then_decider():
    event = Event(FormatSpec("knockout", 3, 2, max_tiebreaks=1))
    (r1,) = event.advance()
    assert r1.byes == (0,) and [(g.white, g.black) for g in r1.games] == [(1, 2), (2, 1)]
    for g in r1.games:
        event.record(g.number, "black")  # 1-1
    (tb,) = event.advance()
    assert (tb.number, tb.stage) == (1, 1)
    assert [(g.label, g.white, g.black) for g in tb.games] == [("1.1", 1, 2), ("1.2", 2, 1)]
    event.record(3, "draw")
    event.record(4, "draw")  # level again, and that was the last tie-break: the decider
    (r2,) = event.advance()
    (tie,) = [t for t in event.bracket()[0] if t.low is not None]
    assert (tie.winner, tie.decided_by, tie.points, tie.tiebreaks) == (1, "decider", (2, 2), 1)
    assert [(g.label, g.white, g.black) for g in r2.games] == [("2", 0, 1), ("2", 1, 0)]
    event.record(5, "white")
    event.record(6, "draw")
    assert event.finished and event.champion == 0
    (final,) = event.bracket()[1]
    assert (final.winner, final.decided_by, final.points) == (0, "games", (1.5, 0.5))
    assert [(s.player, s.rank, s.round_reached) for s in event.standings()] == [
        (0, 1, 3),
        (1, 2, 2),
        (2, 3, 1),
    ]


def test_a_knockout_of_eight_seeds_the_top_two_apart():
    event = Event(FormatSpec("knockout", 8, 2))
    (r,) = event.advance()
    assert [(g.white, g.black) for g in r.games[::2]] == [(0, 7), (3, 4), (1, 6), (2, 5)]


# ----------------------------------------------------------------------------- an event


def test_an_event_restored_from_its_rounds_and_results_goes_on_alike():
    spec = FormatSpec("swiss", 7, 1, 3)
    one, two = Event(spec), None
    for _ in range(2):
        one.advance()
        for g in one.pending():
            one.record(g.number, RESULTS[g.number % 3])
    saved = [Round.from_json(r.to_json()) for r in one.rounds]
    two = Event(spec, saved, one.results)
    assert two.rounds == one.rounds and two.byes() == one.byes()
    assert one.advance() == two.advance()


def test_an_event_refuses_what_it_did_not_make():
    event = Event(FormatSpec("round-robin", 3))
    event.advance()
    with pytest.raises(FormatError, match="no game 9"):
        event.record(9, "white")
    with pytest.raises(FormatError, match="white, black or draw"):
        event.record(1, "1-0")
    with pytest.raises(FormatError, match="numbered"):
        Event(FormatSpec("round-robin", 3), [Round(1, (Game(2, 1, 0, 1),))])


def test_swiss_rounds_by_default_grow_with_the_log_of_the_players():
    assert [swiss_rounds(n) for n in (2, 4, 5, 16, 17)] == [1, 2, 3, 4, 5]


# ----------------------------------------------------------------------------- bad specs


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (dict(format="swiss", players=6, rounds=4), "at most 3 rounds"),
        (dict(format="swiss", players=4, rounds=4), "at most 3 rounds"),
        (dict(format="swiss", players=6), "needs 1 to 3 rounds"),
        (dict(format="knockout", players=1, games=2), "at least two players, not 1"),
        (dict(format="round-robin", players=0), "at least two players"),
        (dict(format="ladder", players=4), "unknown format 'ladder'; the formats are round-robin"),
        (dict(format="knockout", players=4, games=3), "even number of games.*not 3"),
        (dict(format="gauntlet", players=4, games=0), "at least one game"),
        (dict(format="knockout", players=4, games=2, max_tiebreaks=-1), "cannot be negative"),
        (dict(format="gauntlet", players=4, rounds=2), "only a Swiss .* plays 3"),
    ],
)
def test_impossible_specs_are_refused_clearly(spec, message):
    with pytest.raises(FormatError, match=message):
        FormatSpec(**spec)


def test_a_format_error_is_a_value_error_and_the_format_may_be_text():
    assert issubclass(FormatError, ValueError)
    assert FormatSpec("double-round-robin", 2).format is Format.DOUBLE_ROUND_ROBIN


@pytest.mark.parametrize("module", [formats, matching])
def test_the_examples_in_the_docstrings_run(module):
    failures, tried = doctest.testmod(module)
    assert tried and not failures
