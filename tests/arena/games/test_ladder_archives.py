"""The ladder's archives: one file per variant and month of finished ladder games, listed on a
page and in the API, streamed, each game's record in match order, readable by the engine."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

import engine
from arena.games import downloads
from arena.games import services as games
from arena.games.models import Match, MatchRecord
from arena.jobs import claims
from arena.referee import GameResult
from arena.referee.outcomes import Failure
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result, queued_match
from tests.engine.helpers import ROOT, random_game

S = Match.Status
K = Match.Kind


def at(year: int, month: int, day: int = 1, hour: int = 0) -> dt.datetime:
    return dt.datetime(year, month, day, hour, tzinfo=dt.UTC)


def finished(
    pair: tuple[Any, Any], when: dt.datetime, result: GameResult | None = None, **fields: Any
) -> Match:
    """A match finished by the services, at ``when``."""
    variant = fields.setdefault("variant", "yinsh")
    m = queued_match(*pair, **fields)
    assert games.finish(m.pk, claims.claim(Match, m.pk), result or fake_result(variant))
    Match.objects.filter(pk=m.pk).update(finished_at=when)
    return m


def played(variant: str, seed: int) -> GameResult:
    """A game played out by the rules (a random one)."""
    record = engine.Record.from_state(random_game(variant, seed), White="w v1", Black="b v1")
    assert record.outcome is not None
    return GameResult(record.outcome, "rows", None, record, {"moves": []}, 1.0)


def crashed(variant: str) -> GameResult:
    """White's bot exited before its first move: a record without moves."""
    outcome = engine.Outcome(engine.Result.BLACK, Failure.CRASH)
    record = engine.Record(engine.variant(variant), [], outcome, {"White": "w v1"})
    return GameResult(outcome, "white exited", "white", record, {"moves": []}, 0.1)


@pytest.fixture
def pair(user: Any) -> tuple[Any, Any]:
    return make_version(user, "white-bot"), make_version(user, "black-bot")


@pytest.fixture
def november(pair: tuple[Any, Any]) -> list[Match]:
    """Five finished ladder games of YINSH in November 2026, finishing out of match order, and
    games that are not in the archive: other months, another variant, a tournament's, one
    still queued, one finished a second after the month ended."""
    ms = [
        finished(pair, at(2026, 11, 30, 23), played("yinsh", 3)),
        finished(pair, at(2026, 11, 1, 0), crashed("yinsh")),
        finished(pair, at(2026, 11, 15)),
        finished(pair, at(2026, 11, 2), played("yinsh", 4)),
        finished(pair, at(2026, 11, 20), crashed("yinsh")),
    ]
    finished(pair, at(2026, 12, 1, 0) + dt.timedelta(seconds=1))
    finished(pair, at(2026, 10, 31, 23))
    finished(pair, at(2026, 11, 3), variant="blitz")
    finished(pair, at(2026, 11, 4), kind=K.CHALLENGE)
    queued_match(*pair)
    return ms


def replay_file(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", "replay", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


# ----------------------------------------------------------------------------- the file


@pytest.mark.django_db
def test_a_months_file_holds_its_ladder_games_in_match_order_and_replays(
    november: list[Match], tmp_path: Path
) -> None:
    r = Client().get("/archive/yinsh/2026-11.txt")
    assert r.status_code == 200 and r.streaming
    assert r["Content-Type"] == downloads.RECORD_TYPE
    assert r["Content-Disposition"] == 'attachment; filename="ladder-yinsh-2026-11.txt"'
    text = b"".join(r.streaming_content).decode()
    stored = [MatchRecord.objects.get(match=m).record for m in sorted(november, key=lambda m: m.pk)]
    assert text == "\n".join(stored)
    assert list(engine.read_records(text)) == [engine.Record.parse(t) for t in stored]
    path = tmp_path / "ladder-yinsh-2026-11.txt"
    path.write_text(text)
    done = replay_file(path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "5 games"
    assert lines[1] == "game 2: variant yinsh, 0 actions, result black (0-1) by crash"


@pytest.mark.django_db
def test_a_big_month_is_sent_in_pieces(november: list[Match], monkeypatch: Any) -> None:
    monkeypatch.setattr(downloads, "CHUNK", 100)
    r = Client().get("/archive/yinsh/2026-11.txt")
    chunks = list(r.streaming_content)
    assert len(chunks) > 2 and all(len(c) >= 100 for c in chunks[:-1])
    assert len(list(engine.read_records(b"".join(chunks).decode()))) == 5


@pytest.mark.django_db
def test_the_api_serves_the_same_file(november: list[Match]) -> None:
    site = b"".join(Client().get("/archive/yinsh/2026-11.txt").streaming_content)
    r = APIClient().get("/api/matches/archives/yinsh/2026-11/")
    assert r.status_code == 200 and r["Content-Type"] == downloads.RECORD_TYPE
    assert b"".join(r.streaming_content) == site


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("variant", "month"),
    [
        ("chess", "2026-11"),  # no such variant
        ("YINSH", "2026-11"),
        ("yinsh", "2026-13"),
        ("yinsh", "2026-00"),
        ("yinsh", "2026-1"),
        ("yinsh", "26-11"),
        ("yinsh", "0000-01"),
        ("yinsh", "9999-12"),
        ("yinsh", "2026-11-01"),
        ("yinsh", "2026-09"),  # no games that month
        ("yangsh", "2026-11"),  # none of that variant
    ],
)
def test_a_bad_variant_or_month_is_not_found(
    november: list[Match], variant: str, month: str
) -> None:
    assert Client().get(f"/archive/{variant}/{month}.txt").status_code == 404
    r = APIClient().get(f"/api/matches/archives/{variant}/{month}/")
    assert r.status_code == 404 and r.json() == {
        "detail": f"no ladder games of {variant!r} in {month!r}"
    }


# ----------------------------------------------------------------------------- the listing


@pytest.mark.django_db
def test_the_months_are_listed_per_variant_newest_first(november: list[Match]) -> None:
    assert [(m.variant, m.month, m.games) for m in downloads.ladder_months()] == [
        ("yinsh", "2026-12", 1),
        ("yinsh", "2026-11", 5),
        ("yinsh", "2026-10", 1),
        ("blitz", "2026-11", 1),
    ]
    assert [m.month for m in downloads.ladder_months("blitz")] == ["2026-11"]
    assert downloads.ladder_months("yangsh") == []


@pytest.mark.django_db
def test_the_archives_page_links_every_month(november: list[Match]) -> None:
    html = Client().get("/archive/").content.decode()
    for variant, month, count in (("yinsh", "2026-11", 5), ("blitz", "2026-11", 1)):
        link = f'<a href="/archive/{variant}/{month}.txt" download>ladder-{variant}-{month}.txt'
        assert f'<td class="num">{count}</td>\n      <td>{link}' in html
    assert '<h2 id="yinsh">YINSH</h2>' in html and "November 2026" in html
    assert html.index("December 2026") < html.index("November 2026") < html.index("October 2026")
    leaderboard = Client().get("/leaderboard/blitz/").content.decode()
    assert 'href="/archive/#blitz"' in leaderboard


@pytest.mark.django_db
def test_the_archives_page_says_when_there_is_none() -> None:
    r = Client().get("/archive/")
    assert r.status_code == 200 and "No ladder game has finished yet." in r.content.decode()


@pytest.mark.django_db
def test_the_api_lists_the_months_with_their_files(november: list[Match]) -> None:
    r = APIClient().get("/api/matches/archives/")
    assert r.status_code == 200
    rows = r.json()
    assert rows[1] == {
        "variant": "yinsh",
        "month": "2026-11",
        "games": 5,
        "download": "http://testserver/api/matches/archives/yinsh/2026-11/",
    }
    assert [(row["variant"], row["month"]) for row in rows] == [
        (m.variant, m.month) for m in downloads.ladder_months()
    ]
