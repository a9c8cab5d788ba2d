"""Round-robin tournaments: fan-out, release as games finish, pause, resume, cancel, tables."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client

import engine
from arena import stats
from arena.games import services as games
from arena.games.models import Match, MatchRecord
from arena.jobs import claims
from arena.referee import GameResult, TimeControl
from arena.referee.openings import opening
from arena.referee.outcomes import Failure
from arena.referee.schedule import round_robin
from arena.referee.tournament import FinishedGame
from arena.referee.tournament import Tournament as LocalTournament
from arena.tournaments import services
from arena.tournaments.models import Tournament
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result
from tests.engine.helpers import ROOT, random_game
from tests.referee.games import builtin

M = Match.Status


@pytest.fixture
def entrants(user: Any) -> list[Any]:
    return [make_version(user, f"bot-{i}") for i in range(4)]


def start(user: Any, entrants: list[Any], games_per_pair: int = 2, **kw: Any) -> Tournament:
    return services.create(
        user,
        name="Spring cup",
        variant=kw.pop("variant", "blitz"),
        time_control=kw.pop("time_control", "5+0.1"),
        games_per_pair=games_per_pair,
        bots=[v.bot for v in entrants],
        **kw,
    )


def finish_one(match: Match, result: str = "white") -> None:
    assert games.finish(match.pk, claims.claim(Match, match.pk), fake_result(match.variant, result))


@pytest.mark.django_db
def test_every_pair_plays_with_balanced_colours(user: Any, entrants: list[Any]) -> None:
    t = start(user, entrants, games_per_pair=2)
    matches = list(t.matches.all())
    assert len(matches) == 6 * 2
    per_pair = Counter((m.white_id, m.black_id) for m in matches)
    for a in entrants:
        for b in entrants:
            if a != b:
                assert per_pair[a.pk, b.pk] == 1
    whites = Counter(m.white_id for m in matches)
    assert set(whites.values()) == {3}
    assert {m.kind for m in matches} == {Match.Kind.TOURNAMENT}
    assert t.entries.count() == 4


@pytest.mark.django_db
def test_the_two_games_of_a_pair_share_an_opening_and_an_odd_last_game_has_its_own(
    user: Any, entrants: list[Any], settings: Any
) -> None:
    settings.OPENING_PLIES = 4
    t = start(user, entrants, games_per_pair=3)
    by_pair: dict[frozenset[int], list[Match]] = {}
    for m in t.matches.order_by("round", "pk"):
        by_pair.setdefault(frozenset((m.white_id, m.black_id)), []).append(m)
    assert len(by_pair) == 6
    seen = set()
    for first, second, third in by_pair.values():
        assert (first.white_id, first.black_id) == (second.black_id, second.white_id)
        assert first.opening == second.opening and first.seed == second.seed
        assert tuple(first.opening.split()) == opening("blitz", first.seed, 4)
        assert third.opening != first.opening and len(third.opening.split()) == 4
        seen |= {first.opening, third.opening}
    assert len(seen) == 12  # every leg its own opening


@pytest.mark.django_db
def test_a_tournament_without_opening_plies_starts_from_the_empty_board(
    user: Any, entrants: list[Any], settings: Any
) -> None:
    settings.OPENING_PLIES = 0
    t = start(user, entrants[:2], games_per_pair=2)
    assert [m.opening for m in t.matches.all()] == ["", ""]


@pytest.mark.django_db
def test_matches_fan_out_a_few_at_a_time(
    user: Any, entrants: list[Any], settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    settings.TOURNAMENT_PARALLEL = 3
    with django_capture_on_commit_callbacks() as sent:
        t = start(user, entrants)
    assert t.matches.filter(status=M.QUEUED).count() == 3
    assert len(sent) == 3
    first = t.matches.filter(status=M.QUEUED).order_by("pk").first()
    assert first is not None and first.round == 1
    with django_capture_on_commit_callbacks() as sent:
        finish_one(first)
    assert t.matches.filter(status=M.QUEUED).count() == 3  # one more released
    assert len(sent) == 1


@pytest.mark.django_db
def test_a_tournament_finishes_when_its_last_game_does(user: Any, entrants: list[Any]) -> None:
    t = start(user, entrants[:2], games_per_pair=2)
    while (m := t.matches.filter(status=M.QUEUED).first()) is not None:
        finish_one(m, "draw")
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED and t.finished_at is not None


@pytest.mark.django_db
def test_pause_takes_back_queued_games_and_resume_releases_them(
    user: Any, entrants: list[Any], settings: Any
) -> None:
    settings.TOURNAMENT_PARALLEL = 2
    t = start(user, entrants)
    running = t.matches.filter(status=M.QUEUED).first()
    attempt = claims.claim(Match, running.pk)
    assert services.pause(user, t)
    assert t.matches.filter(status=M.QUEUED).count() == 0
    assert Tournament.objects.get(pk=t.pk).status == Tournament.Status.PAUSED
    # The running game finishes and counts; nothing new is released while paused.
    assert games.finish(running.pk, attempt, fake_result("blitz"))
    assert t.matches.filter(status__in=[M.QUEUED, M.RUNNING]).count() == 0
    # A stale task of a taken-back match does nothing.
    taken_back = t.matches.filter(status=M.PENDING).first()
    assert claims.claim(Match, taken_back.pk) is None
    assert not services.pause(user, t)  # already paused
    assert services.resume(user, t)
    assert t.matches.filter(status=M.QUEUED).count() == 2


@pytest.mark.django_db
def test_cancel_stops_everything_and_a_running_game_is_discarded(
    user: Any, entrants: list[Any]
) -> None:
    t = start(user, entrants)
    running = t.matches.filter(status=M.QUEUED).first()
    attempt = claims.claim(Match, running.pk)
    assert services.cancel(user, t)
    assert set(t.matches.values_list("status", flat=True)) == {M.CANCELLED}
    assert not claims.beat(Match, running.pk, attempt)  # its worker aborts the game
    assert not games.finish(running.pk, attempt, fake_result("blitz"))
    assert not services.resume(user, t) and not services.cancel(user, t)


@pytest.mark.django_db
def test_only_the_organiser_controls_a_tournament(
    user: Any, other_user: Any, entrants: list[Any]
) -> None:
    t = start(user, entrants)
    for action in (services.pause, services.resume, services.cancel):
        with pytest.raises(PermissionDenied):
            action(other_user, t)
    assert Tournament.objects.get(pk=t.pk).status == Tournament.Status.RUNNING


@pytest.mark.django_db
def test_organising_can_be_limited_to_organisers(
    user: Any, other_user: Any, entrants: list[Any], settings: Any
) -> None:
    from django.contrib.auth.models import Group

    settings.OPEN_TOURNAMENTS = False
    with pytest.raises(PermissionDenied):
        start(other_user, entrants)
    other_user.groups.add(Group.objects.get(name="organisers"))
    other_user = type(other_user).objects.get(pk=other_user.pk)  # fresh permission cache
    assert start(other_user, entrants).organiser == other_user


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"time_control": "fast"}, "bad time control"),
        ({"time_control": "10000+60"}, "too long"),
        ({"variant": "chess"}, "unknown variant"),
    ],
)
def test_bad_tournaments_are_refused(
    user: Any, entrants: list[Any], kw: dict[str, str], message: str
) -> None:
    with pytest.raises(services.TournamentError, match=message):
        start(user, entrants, **kw)
    assert not Tournament.objects.exists()


@pytest.mark.django_db
def test_bots_without_an_active_version_cannot_enter(user: Any, entrants: list[Any]) -> None:
    pending = make_version(user, "pending", status="pending")
    with pytest.raises(services.TournamentError, match="pending"):
        start(user, [*entrants, pending])


@pytest.mark.django_db
def test_an_entrant_that_does_not_play_the_variant_is_refused_by_name(
    user: Any, entrants: list[Any]
) -> None:
    classic = make_version(user, "classic", variants=["yinsh", "blitz"])
    pawns = make_version(user, "pawns", variants=["yangsh"])
    message = r"not playing Yangsh \(7 pawns\): classic v1 plays only YINSH, Blitz YINSH; pawns"
    with pytest.raises(services.TournamentError, match=message):
        start(user, [*entrants, classic, pawns], variant="yangsh7")
    assert not Tournament.objects.exists() and not Match.objects.exists()
    # In a variant they all declare, they all play, and only that variant is scheduled.
    t = start(user, [*entrants, classic], variant="blitz", games_per_pair=1)
    assert {m.variant for m in t.matches.all()} == {"blitz"}
    assert t.matches.filter(white=classic).count() + t.matches.filter(black=classic).count() == 4


@pytest.mark.django_db
def test_standings_and_crosstable_follow_the_results(user: Any, entrants: list[Any]) -> None:
    a, b, c = entrants[:3]
    t = start(user, [a, b, c], games_per_pair=2)
    for m in list(t.matches.order_by("round", "pk")):
        Match.objects.filter(pk=m.pk).update(status=M.QUEUED)
        # a beats everyone, b and c draw.
        if a.pk in (m.white_id, m.black_id):
            result = "white" if m.white_id == a.pk else "black"
        else:
            result = "draw"
        finish_one(m, result)
    table = services.standings(t)
    assert [s.player.version_id for s in table][0] == a.pk
    assert (table[0].points, table[0].wins, table[0].games) == (4.0, 4, 4)
    assert table[1].points == table[2].points == 1.0
    cross = services.crosstable(table)
    assert cross[0][1] == ["x", "2/2", "2/2"]
    assert cross[1][1][0] == "0/2"
    progress = services.progress(t)
    assert (progress.total, progress.done, progress.percent) == (6, 6, 100.0)


#: The result of each game of the next test, by the entrants' places (white, black).
RESULTS = {
    (0, 1): "white", (1, 0): "draw", (0, 2): "black", (2, 0): "white", (0, 3): "white",
    (3, 0): "black", (1, 2): "draw", (2, 1): "black", (1, 3): "white", (3, 1): "draw",
    (2, 3): "black", (3, 2): "white",
}  # fmt: skip


@pytest.mark.django_db
def test_the_site_and_the_local_tournament_rank_the_same_games_alike(
    user: Any, entrants: list[Any], tmp_path: Path
) -> None:
    """The site's tournament and ``manage.py tournament`` count with the one standings
    function: the same games give the same points, tie-breaks, ranks and cross-table."""
    t = start(user, entrants, games_per_pair=2)
    place = {v.pk: i for i, v in enumerate(entrants)}
    for m in list(t.matches.order_by("round", "pk")):
        Match.objects.filter(pk=m.pk).update(status=M.QUEUED)
        finish_one(m, RESULTS[place[m.white_id], place[m.black_id]])
    local = LocalTournament(
        tmp_path, [builtin("random")] * 4, "blitz", TimeControl.parse("5+0.1"), 1, seed=1
    )
    for p in local.schedule:
        local.games[p.number] = FinishedGame(
            p.number,
            local.names[p.white],
            local.names[p.black],
            RESULTS[p.white, p.black],
            "rows",
            "",
            None,
            0.0,
        )
    site_table, local_table = services.standings(t), local.standings()

    def rows(table: list[Any], where: Any) -> list[tuple[Any, ...]]:
        return [
            (s.rank, where(s.player), s.points, s.games, s.wins, s.draws, s.losses, s.tiebreak)
            for s in table
        ]

    assert rows(site_table, lambda e: place[e.version_id]) == rows(local_table, local.names.index)
    assert len({s.points for s in site_table}) < 4  # a tie the tie-breaks settle
    assert [cells for _, cells in services.crosstable(site_table)] == [
        cells for _, cells in stats.cross_table(local_table)
    ]


@pytest.mark.django_db
def test_the_archive_holds_every_record_byte_for_byte(user: Any, entrants: list[Any]) -> None:
    t = start(user, entrants[:2], games_per_pair=2)
    while (m := t.matches.filter(status=M.QUEUED).first()) is not None:
        finish_one(m)
    with zipfile.ZipFile(io.BytesIO(services.archive(t))) as zf:
        names = zf.namelist()
        for data in MatchRecord.objects.filter(match__tournament=t):
            long_name = next(
                n
                for n in names
                if n.endswith(f"records/round-{data.match.round:03d}-match-{data.match_id}.txt")
            )
            assert zf.read(long_name).decode() == data.record
            short = long_name.replace("/records/", "/records-short/")
            assert zf.read(short).decode() == data.record_short
        assert any(n.endswith("standings.txt") for n in names)
        assert any(n.endswith("all-games.txt") for n in names)


def game_result(record: engine.Record, fault: str | None = None) -> GameResult:
    """What the referee returns for a game with this record."""
    assert record.outcome is not None
    return GameResult(record.outcome, "the game ended", fault, record, {"moves": []}, 1.0)


def replay_file(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", "replay", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.django_db
def test_every_game_file_of_a_downloaded_archive_replays(
    user: Any, entrants: list[Any], tmp_path: Path
) -> None:
    """The archive as the site serves it: each record, long and short, and all-games.txt (every
    game one after another), pass ``python -m engine replay``; all-games.txt once did not."""
    t = start(user, entrants[:2], games_per_pair=3)
    headers = {"Event": t.name, "White": "bot-0 v1", "Black": "bot-1 v1"}
    played = engine.Record.from_state(random_game("blitz", 7), **headers)
    crashed = engine.Record(  # White's bot exited before its first move
        engine.variant("blitz"), [], engine.Outcome(engine.Result.BLACK, Failure.CRASH), headers
    )
    results = [game_result(played), game_result(crashed, "white"), fake_result("blitz", "black")]
    for m, result in zip(t.matches.order_by("round", "pk"), results, strict=True):
        Match.objects.filter(pk=m.pk).update(status=M.QUEUED)
        assert games.finish(m.pk, claims.claim(Match, m.pk), result)
    archive = Client().get(f"/tournaments/{t.pk}/archive.zip")
    assert archive.status_code == 200
    with zipfile.ZipFile(io.BytesIO(archive.content)) as zf:
        zf.extractall(tmp_path)
    files = sorted(p for p in tmp_path.rglob("*.txt") if p.name != "standings.txt")
    assert len(files) == 2 * 3 + 1
    for path in files:
        done = replay_file(path)
        assert done.returncode == 0, f"{path.name}: {done.stderr}"
    (everything,) = tmp_path.rglob("all-games.txt")
    lines = replay_file(everything).stdout.splitlines()
    assert lines[-1] == "3 games"
    assert re.fullmatch(r"game 1: variant blitz, \d+ actions, result \w+ \(.+\) by rows", lines[0])
    assert lines[1] == "game 2: variant blitz, 0 actions, result black (0-1) by crash"
    assert lines[2] == "game 3: variant blitz, 2 actions, result black (0-1) by time"
    assert list(engine.read_records(everything.read_text())) == [
        engine.Record.parse(r.record)
        for r in MatchRecord.objects.filter(match__tournament=t).order_by("match__round", "pk")
    ]


@pytest.mark.django_db
def test_a_tournament_plays_the_referees_round_robin(user: Any, settings: Any) -> None:
    """The site and the local command share one scheduler: rounds where everyone plays at most
    once, each pair once per cycle, the colours reversed in the next cycle."""
    settings.OPEN_TOURNAMENTS = True
    bots = [make_version(user, f"rr-{i}").bot for i in range(5)]
    t = services.create(
        user, name="rr", variant="yinsh", time_control="5+0.1", games_per_pair=2, bots=bots
    )
    seeds = {e.version_id: e.seed - 1 for e in t.entries.all()}
    made = [
        (m.round, seeds[m.white_id], seeds[m.black_id])
        for m in Match.objects.filter(tournament=t).order_by("round", "pk")
    ]
    expected = [(p.round, p.white, p.black) for p in round_robin(5, 2)]
    assert sorted(made) == sorted(expected)


def abort_one(match: Match, settings: Any) -> None:
    """The machine fails the match until the arena gives up on it."""
    settings.MATCH_MAX_ATTEMPTS = 1
    assert not claims.release(Match, match.pk, claims.claim(Match, match.pk), "the sandbox broke")
    assert Match.objects.get(pk=match.pk).status == M.ABORTED


@pytest.mark.django_db
def test_a_tournament_with_an_aborted_game_is_incomplete_and_can_play_it_again(
    user: Any, other_user: Any, entrants: list[Any], settings: Any
) -> None:
    t = start(user, entrants[:2], games_per_pair=2)
    first, second = t.matches.order_by("pk")
    finish_one(first, "draw")
    abort_one(second, settings)
    t.refresh_from_db()
    assert t.status == Tournament.Status.INCOMPLETE and t.finished_at is not None

    with pytest.raises(PermissionDenied):
        services.play_missing_again(other_user, t)
    settings.MATCH_MAX_ATTEMPTS = 3
    assert services.play_missing_again(user, t)
    second.refresh_from_db()
    assert second.status == M.QUEUED and second.attempts == 0 and second.reason == ""
    t.refresh_from_db()
    assert t.status == Tournament.Status.RUNNING and t.finished_at is None
    assert not services.play_missing_again(user, t)  # only an incomplete one
    finish_one(second, "white")
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    assert MatchRecord.objects.filter(match__tournament=t).count() == 2
    assert sum(s.games for s in services.standings(t)) == 4  # both games, for both sides


@pytest.mark.django_db
def test_the_site_and_the_api_say_incomplete_and_offer_to_play_the_missing_games(
    user: Any, other_user: Any, entrants: list[Any], settings: Any
) -> None:
    from django.test import Client
    from rest_framework.test import APIClient

    t = start(user, entrants[:2], games_per_pair=1)
    abort_one(t.matches.get(), settings)
    settings.MATCH_MAX_ATTEMPTS = 3
    site = Client()
    site.force_login(user)
    page = site.get(f"/tournaments/{t.pk}/").content.decode()
    assert "Incomplete: 1 game could not be played" in page
    assert "Play the missing games again" in page
    visitor = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Incomplete" in visitor and "Play the missing games again" not in visitor

    api = APIClient()
    api.force_authenticate(other_user)
    assert api.post(f"/api/tournaments/{t.pk}/replay/").status_code == 403
    assert APIClient().get(f"/api/tournaments/{t.pk}/").json()["status"] == "incomplete"
    api.force_authenticate(user)
    r = api.post(f"/api/tournaments/{t.pk}/replay/")
    assert r.status_code == 200 and r.json()["status"] == "running"
    assert api.post(f"/api/tournaments/{t.pk}/replay/").status_code == 409
    assert t.matches.get().status == M.QUEUED
    # The site's button does the same once the game is aborted again.
    settings.MATCH_MAX_ATTEMPTS = 1
    abort_one(t.matches.get(), settings)
    assert site.post(f"/tournaments/{t.pk}/replay/").status_code == 302
    assert Tournament.objects.get(pk=t.pk).status == Tournament.Status.RUNNING


# ----------------------------------------------------------------------------- consent


@pytest.mark.django_db
def test_a_rated_tournament_refuses_other_peoples_bots_that_have_not_opted_in(
    user: Any, other_user: Any, anchor: Any
) -> None:
    mine = make_version(user, "mine")
    theirs = [make_version(other_user, name) for name in ("rival", "shy")]
    with pytest.raises(
        services.TournamentError,
        match=r"owners accept rated tournaments; these do not: rival, shy \(make it unrated",
    ):
        start(user, [mine, *theirs], rated=True)
    assert not Tournament.objects.exists() and not Match.objects.exists()
    # One accepts: the other is still named.
    rival = theirs[0].bot
    rival.rated_tournaments = True
    rival.save(update_fields=["rated_tournaments"])
    with pytest.raises(services.TournamentError, match=r"these do not: shy \("):
        start(user, [mine, *theirs], rated=True)
    assert not Tournament.objects.exists()


@pytest.mark.django_db
def test_own_built_in_and_opted_in_bots_may_play_a_rated_tournament(
    user: Any, other_user: Any, anchor: Any
) -> None:
    mine = make_version(user, "mine")
    willing = make_version(other_user, "willing")
    willing.bot.rated_tournaments = True
    willing.bot.save(update_fields=["rated_tournaments"])
    t = start(user, [mine, willing, anchor], rated=True)
    assert t.rated and set(t.matches.values_list("rated", flat=True)) == {True}


@pytest.mark.django_db
def test_an_unrated_tournament_may_include_anyones_bots(user: Any, other_user: Any) -> None:
    t = start(user, [make_version(user, "mine"), make_version(other_user, "rival")], rated=False)
    assert not t.rated and set(t.matches.values_list("rated", flat=True)) == {False}


@pytest.mark.django_db
def test_a_caller_that_does_not_say_gets_rated_only_when_every_entrant_accepts(
    user: Any, other_user: Any, anchor: Any
) -> None:
    mine = make_version(user, "mine")
    assert start(user, [mine, anchor]).rated
    assert not start(user, [mine, make_version(other_user, "rival")]).rated
