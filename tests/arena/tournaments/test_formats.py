"""The site's tournaments in every format of the one core (arena.referee.formats): rounds made
as the ones before end, byes, tie-breaks, the lock that makes a round once, incomplete rounds
played again, refusals, and tables. Results are written as a worker writes them, with fake
games."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connections

from arena.games import services as games
from arena.games.models import Match
from arena.jobs import claims
from arena.notifications.models import Notification
from arena.ratings.models import Rating
from arena.referee import formats
from arena.tournaments import services
from arena.tournaments.models import Bye, Tournament
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result
from tests.arena.tournaments.test_tournaments import abort_one, finish_one

M = Match.Status
TS = Tournament.Status


def versions(user: Any, n: int) -> list[Any]:
    return [make_version(user, f"fmt-{i}") for i in range(n)]


def start(user: Any, entrants: list[Any], fmt: str, games: int = 2, **kw: Any) -> Tournament:
    return services.create(
        user,
        name=f"{fmt} cup",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=games,
        bots=[v.bot for v in entrants],
        format=fmt,
        **kw,
    )


def seeds(t: Tournament) -> dict[int, int]:
    """Each entrant's player number in the core (seed 1 is player 0), by version id."""
    return {e.version_id: e.seed - 1 for e in t.entries.all()}


def the_higher_seed_wins(seed: dict[int, int]) -> Callable[[Match], str]:
    return lambda m: "white" if seed[m.white_id] < seed[m.black_id] else "black"


def play_out(t: Tournament, result: Callable[[Match], str]) -> None:
    """Finish the tournament's queued games, one at a time, until none is left queued."""
    while (m := t.matches.filter(status=M.QUEUED).order_by("pk").first()) is not None:
        finish_one(m, result(m))


def games_of(t: Tournament) -> list[tuple[int, int, int, int, int]]:
    """(round, tie-break, white, black, seed) of each match in the order made, players as
    the core numbers them."""
    seed = seeds(t)
    return [
        (m.round, m.tiebreak, seed[m.white_id], seed[m.black_id], m.seed)
        for m in t.matches.order_by("pk")
    ]


def core_games(spec: formats.FormatSpec, result: Callable[[int, int], str]) -> list[Any]:
    """The games the core makes for ``spec`` when each game's result is ``result(white,
    black)``: (round, tie-break, white, black) in the order made."""
    event = formats.Event(spec)
    while not event.finished:
        assert event.advance()
        for g in event.pending():
            event.record(g.number, result(g.white, g.black))
    return [(g.round, g.tiebreak, g.white, g.black) for g in event.games]


def higher(white: int, black: int) -> str:
    return "white" if white < black else "black"


# ----------------------------------------------------------------------------- the formats


def test_the_sites_formats_are_the_cores() -> None:
    assert Tournament.Format.values == [f.value for f in formats.Format]


@pytest.mark.django_db
def test_a_swiss_makes_each_round_once_the_one_before_is_played(user: Any) -> None:
    t = start(user, versions(user, 4), "swiss", games=2, rounds=3)
    assert (t.format, t.rounds) == ("swiss", 3)
    assert set(t.matches.values_list("round", flat=True)) == {1}
    assert t.matches.count() == 4  # two boards of two games
    result = the_higher_seed_wins(seeds(t))
    *first, last = t.matches.order_by("pk")
    for m in first:
        if m.status == M.PENDING:
            Match.objects.filter(pk=m.pk).update(status=M.QUEUED)
        finish_one(m, result(m))
    assert t.matches.count() == 4  # round 2 waits for round 1's last game
    finish_one(last, result(last))
    assert set(t.matches.values_list("round", flat=True)) == {1, 2}
    assert t.matches.filter(round=2, status=M.QUEUED).count() == 4
    play_out(t, result)
    t.refresh_from_db()
    assert t.status == TS.FINISHED
    # The site made the core's games, round by round, and nobody met anybody twice.
    made = games_of(t)
    assert [g[:4] for g in made] == core_games(services.spec_of(t), higher)
    boards = Counter(frozenset(g[2:4]) for g in made)
    assert len(boards) == 6 and set(boards.values()) == {2}


@pytest.mark.django_db
def test_a_swiss_is_seeded_by_rating_and_ranked_with_its_tie_breaks(user: Any) -> None:
    entrants = versions(user, 4)
    for elo, v in zip((1500, 1700), entrants[2:], strict=True):
        Rating.objects.create(variant="blitz", version=v, elo=elo, games=10, points=5, rank=1)
    t = start(user, entrants, "swiss", games=1, rounds=3)
    by_seed = [e.version_id for e in t.entries.order_by("seed")]
    assert by_seed == [entrants[3].pk, entrants[2].pk, entrants[0].pk, entrants[1].pk]
    play_out(t, lambda m: "draw" if m.round == 3 else "white")
    table = services.standings(t)
    ev = services.event(t)
    core = ev.standings()
    assert [s.player.seed - 1 for s in table] == [s.player for s in core]
    for mine, theirs in zip(table, core, strict=True):
        assert (mine.points, mine.games, mine.rank) == (theirs.points, theirs.games, theirs.rank)
        assert mine.buchholz == theirs.buchholz
        assert mine.sonneborn_berger == theirs.sonneborn_berger
        assert mine.head_to_head == theirs.head_to_head
    assert sum(s.points for s in table) == 6  # 3 rounds of 2 boards of 1 game
    assert any(s.buchholz for s in table)


@pytest.mark.django_db
def test_a_swiss_with_an_odd_count_gives_one_bye_a_round_each_to_someone_new(
    user: Any,
) -> None:
    t = start(user, versions(user, 5), "swiss", games=2, rounds=3)
    play_out(t, the_higher_seed_wins(seeds(t)))
    t.refresh_from_db()
    assert t.status == TS.FINISHED
    byes = list(Bye.objects.filter(tournament=t).order_by("round"))
    assert [b.round for b in byes] == [1, 2, 3]
    assert len({b.entry_id for b in byes}) == 3
    for b in byes:  # a player with a bye plays nobody that round
        assert not t.matches.filter(round=b.round, white=b.entry.version).exists()
        assert not t.matches.filter(round=b.round, black=b.entry.version).exists()
    table = {s.player.pk: s for s in services.standings(t)}
    for b in byes:
        assert table[b.entry_id].byes == 1 and table[b.entry_id].bye_points == 2.0
    assert [g[:4] for g in games_of(t)] == core_games(services.spec_of(t), higher)


@pytest.mark.django_db
def test_a_mini_matchs_colour_reversed_games_share_an_opening(user: Any, settings: Any) -> None:
    settings.OPENING_PLIES = 4
    t = start(user, versions(user, 4), "swiss", games=3, rounds=1)
    by_board: dict[frozenset[int], list[Match]] = {}
    for m in t.matches.order_by("pk"):
        by_board.setdefault(frozenset((m.white_id, m.black_id)), []).append(m)
    assert len(by_board) == 2
    for first, second, third in by_board.values():
        assert (first.white_id, first.black_id) == (second.black_id, second.white_id)
        assert first.opening == second.opening and first.seed == second.seed
        assert third.opening != first.opening and len(third.opening.split()) == 4


@pytest.mark.django_db
def test_a_double_round_robin_plays_every_pair_twice_as_often(user: Any) -> None:
    t = start(user, versions(user, 3), "double-round-robin", games=1)
    pairs = Counter((m.white_id, m.black_id) for m in t.matches.all())
    assert len(pairs) == 6 and set(pairs.values()) == {1}  # each pair once with each colour
    spec = services.spec_of(t)
    assert [g[:4] for g in games_of(t)] == core_games(spec, higher)
    play_out(t, lambda m: "draw")
    table = services.standings(t)
    assert [s.points for s in table] == [2.0, 2.0, 2.0]
    assert Tournament.objects.get(pk=t.pk).status == TS.FINISHED


@pytest.mark.django_db
def test_a_gauntlet_plays_its_seed_against_each_other_bot(user: Any) -> None:
    entrants = versions(user, 4)
    t = start(user, entrants, "gauntlet", games=2, seed=entrants[2].bot)
    assert t.entries.get(seed=1).version == entrants[2]
    assert t.matches.count() == 3 * 2  # all its rounds at once
    for m in t.matches.all():
        assert entrants[2].pk in (m.white_id, m.black_id)
    place = {v.pk: i for i, v in enumerate(entrants)}

    def result(m: Match) -> str:
        # The seed beats bot 0, draws with bot 1, loses to bot 3.
        other = place[m.black_id if m.white_id == entrants[2].pk else m.white_id]
        seed_side = "white" if m.white_id == entrants[2].pk else "black"
        if other == 1:
            return "draw"
        wins = other == 0
        return seed_side if wins else ("black" if seed_side == "white" else "white")

    play_out(t, result)
    table = services.standings(t)
    assert table[0].player.version == entrants[2]  # 3 points of 6
    g = services.gauntlet(t, table)
    assert g is not None and g.seed.player.version == entrants[2]
    against = [(s.opponent.version, s.score.wins, s.score.draws, s.score.losses) for s in g.scores]
    assert against == [(entrants[0], 2, 0, 0), (entrants[1], 0, 2, 0), (entrants[3], 0, 0, 2)]


@pytest.mark.django_db
def test_a_gauntlets_seed_is_the_first_bot_unless_chosen(user: Any) -> None:
    entrants = versions(user, 3)
    t = start(user, entrants, "gauntlet", games=1)
    assert t.entries.get(seed=1).version == entrants[0]
    assert "gauntlet of fmt-0 v1" in services.describe(t)


@pytest.mark.django_db
def test_a_knockout_is_seeded_by_rating_the_unrated_last(user: Any) -> None:
    entrants = versions(user, 4)
    Rating.objects.create(variant="blitz", version=entrants[3], elo=1600, games=9, points=5, rank=1)
    Rating.objects.create(variant="blitz", version=entrants[1], elo=1400, games=9, points=4, rank=2)
    Rating.objects.create(variant="yinsh", version=entrants[2], elo=2000, games=9, points=9, rank=1)
    t = start(user, entrants, "knockout", games=2)
    order = [e.version for e in t.entries.order_by("seed")]
    assert order == [entrants[3], entrants[1], entrants[0], entrants[2]]  # another variant's
    # Round 1: seed 1 against seed 4, seed 2 against seed 3.
    assert {frozenset(g[2:4]) for g in games_of(t)} == {frozenset((0, 3)), frozenset((1, 2))}


@pytest.mark.django_db
def test_a_knockout_gives_byes_breaks_ties_and_crowns_a_champion(user: Any) -> None:
    t = start(user, versions(user, 3), "knockout", games=2)
    assert [(b.round, b.entry.seed) for b in Bye.objects.filter(tournament=t)] == [(1, 1)]
    first = list(t.matches.order_by("pk"))
    assert [(m.round, m.tiebreak) for m in first] == [(1, 0), (1, 0)]
    for m in first:  # 1-1: level
        finish_one(m, "white")
    tiebreak = list(t.matches.filter(tiebreak__gt=0).order_by("pk"))
    assert [m.round_label for m in tiebreak] == ["1.1", "1.2"]
    drawn = services.bracket(t)
    assert drawn is not None
    under_way = drawn.rounds[0].ties[1]
    assert under_way is not None and under_way.winner is None
    assert (under_way.points, under_way.games, under_way.tiebreaks) == ((1.0, 1.0), 4, 1)
    assert tiebreak[0].opening == tiebreak[1].opening  # a leg of its own
    assert tiebreak[0].white_id == first[0].white_id  # the higher seed White first
    low = tiebreak[0].black_id
    for m in tiebreak:  # the lower seed wins both
        finish_one(m, "white" if m.white_id == low else "black")
    final = list(t.matches.filter(round=2).order_by("pk"))
    assert len(final) == 2
    top = t.entries.get(seed=1).version_id
    assert {final[0].white_id, final[0].black_id} == {top, low}
    for m in final:
        finish_one(m, "white" if m.white_id == low else "draw")
    t.refresh_from_db()
    assert t.status == TS.FINISHED
    drawn = services.bracket(t)
    assert drawn is not None and drawn.champion is not None
    assert drawn.champion.version_id == low
    assert [r.name for r in drawn.rounds] == ["Semi-finals", "Final"]
    semi = drawn.rounds[0].ties
    assert semi[0] is not None and semi[0].decided_by == "bye"
    assert semi[1] is not None and semi[1].decided_by == "tie-break"
    assert semi[1].points == (1.0, 3.0) and semi[1].tiebreaks == 1
    table = services.standings(t)
    assert table[0].player.version_id == low and table[0].round_reached == 3
    note = Notification.objects.filter(user=user).latest("pk")
    assert note.text.endswith(f"{table[0].player.version.label} won the knockout.")
    assert note.data["winner"] == table[0].player.version.label
    assert note.data["format"] == "knockout"


@pytest.mark.django_db
def test_a_knockout_plays_the_cores_bracket(user: Any) -> None:
    t = start(user, versions(user, 5), "knockout", games=2)
    play_out(t, lambda m: "white")  # every mini-match level: tie-breaks, then the decider
    t.refresh_from_db()
    assert t.status == TS.FINISHED
    assert [g[:4] for g in games_of(t)] == core_games(services.spec_of(t), lambda w, b: "white")
    drawn = services.bracket(t)
    assert drawn is not None and drawn.champion == t.entries.get(seed=1)
    assert {t.decided_by for r in drawn.rounds for t in r.ties if t} == {"bye", "decider"}


# ----------------------------------------------------------------------------- refusals


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("n", "fmt", "kw", "message"),
    [
        (4, "swiss", {"rounds": 4}, "at most 3 rounds"),
        (4, "swiss", {"rounds": 0}, "1 to 3 rounds"),
        (4, "knockout", {"games": 3}, "even number of games"),
        (1, "knockout", {}, "needs 2 to 64 bots"),
        (3, "league", {}, "unknown format 'league'; the formats are round-robin, "),
        (3, "round-robin", {"rounds": 2}, "only a Swiss is given its number of rounds"),
        (3, "knockout", {"seed": 0}, "only a gauntlet has a seed"),
    ],
)
def test_what_a_format_cannot_play_is_refused_and_creates_nothing(
    user: Any, n: int, fmt: str, kw: dict[str, Any], message: str
) -> None:
    entrants = versions(user, n)
    if "seed" in kw:
        kw["seed"] = entrants[kw["seed"]].bot
    with pytest.raises(services.TournamentError, match=message):
        start(user, entrants, fmt, **{"games": 2, **kw})
    assert not Tournament.objects.exists() and not Match.objects.exists()


@pytest.mark.django_db
def test_a_gauntlets_seed_must_be_one_of_its_bots(user: Any) -> None:
    entrants = versions(user, 4)
    with pytest.raises(services.TournamentError, match="seed, fmt-3, is not one of its bots"):
        start(user, entrants[:3], "gauntlet", seed=entrants[3].bot)
    assert not Tournament.objects.exists()


@pytest.mark.django_db
def test_a_swiss_without_rounds_plays_its_usual_length(user: Any) -> None:
    t = start(user, versions(user, 5), "swiss")
    assert t.rounds == formats.swiss_rounds(5) == 3


# ----------------------------------------------------------------------------- races, replays


@pytest.mark.django_db
def test_a_round_is_made_once_however_often_release_runs(user: Any) -> None:
    t = start(user, versions(user, 4), "swiss", games=1, rounds=2)
    for m in list(t.matches.all()):
        finish_one(m, "white")
    assert t.matches.filter(round=2).count() == 2
    for _ in range(3):
        services.release(t.pk)
    assert t.matches.filter(round=2).count() == 2
    assert not t.matches.filter(round=3).exists()


@pytest.mark.django_db(transaction=True)
def test_two_workers_finishing_a_rounds_last_games_at_once_make_one_next_round(
    user: Any,
) -> None:
    # Unrated: a rated result's count would queue the two transactions on its row anyway.
    t = start(user, versions(user, 4), "swiss", games=1, rounds=3, rated=False)
    last = list(t.matches.order_by("pk"))
    assert len(last) == 2
    attempts = [claims.claim(Match, m.pk) for m in last]
    barrier = threading.Barrier(2)
    outcomes: list[bool] = []

    def finisher(m: Match, attempt: int) -> None:
        try:
            barrier.wait()
            outcomes.append(games.finish(m.pk, attempt, fake_result("blitz", "white")))
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=finisher, args=(m, a)) for m, a in zip(last, attempts, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes == [True, True]
    assert t.matches.filter(round=2).count() == 2  # one round 2, not none, not two
    assert not t.matches.filter(round=3).exists()
    assert Tournament.objects.get(pk=t.pk).status == TS.RUNNING


@pytest.mark.django_db
def test_a_swiss_stalled_by_an_aborted_game_is_incomplete_then_goes_on(
    user: Any, settings: Any
) -> None:
    t = start(user, versions(user, 4), "swiss", games=1, rounds=2)
    first, second = t.matches.order_by("pk")
    finish_one(first, "white")
    abort_one(second, settings)
    t.refresh_from_db()
    assert t.status == TS.INCOMPLETE
    assert not t.matches.filter(round=2).exists()  # no round on a missing result
    note = Notification.objects.filter(user=user).latest("pk")
    assert " leads with 1 points in 1 games. It is incomplete: 1 game " in note.text
    settings.MATCH_MAX_ATTEMPTS = 3
    assert services.play_missing_again(user, t)
    second.refresh_from_db()
    assert second.status == M.QUEUED and not t.matches.filter(round=2).exists()
    finish_one(second, "black")
    assert t.matches.filter(round=2).count() == 2  # now the next round
    play_out(t, lambda m: "draw")
    t.refresh_from_db()
    assert t.status == TS.FINISHED


@pytest.mark.django_db
def test_a_paused_swiss_makes_its_next_round_when_resumed(user: Any) -> None:
    t = start(user, versions(user, 4), "swiss", games=1, rounds=2)
    first, second = t.matches.order_by("pk")
    attempt = claims.claim(Match, second.pk)
    finish_one(first, "white")
    assert services.pause(user, t)
    assert games.finish(second.pk, attempt, fake_result("blitz", "white"))
    assert not t.matches.filter(round=2).exists()  # nothing new while paused
    assert services.resume(user, t)
    assert t.matches.filter(round=2, status=M.QUEUED).count() == 2
