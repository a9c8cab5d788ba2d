"""Watching a match live: the feed (``/matches/<id>/live.json``), the page, and the links to
games in progress. The games here are written as the referee writes them (its ``on_played``
values, from a real engine game); tests/arena/games/test_live_worker.py plays real ones."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

import engine
from arena.games import live, services
from arena.games.models import LiveMove, Match
from arena.jobs import claims
from arena.jobs.sidecar import ThreadSidecar
from arena.referee.game import Played
from arena.tournaments import services as tournaments
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result, queued_match

S = Match.Status


@pytest.fixture
def pair(user: Any) -> tuple[Any, Any]:
    return make_version(user, "white-bot"), make_version(user, "black-bot")


def running_match(pair: tuple[Any, Any], **fields: Any) -> tuple[Match, int]:
    m = queued_match(*pair, **fields)
    attempt = claims.claim(Match, m.pk, "test")
    assert attempt is not None
    return m, attempt


def play_some(
    match: Match, attempt: int, plies: int, *, seed: int = 3, info: bool = False
) -> list[Played]:
    """Play ``plies`` random legal actions after the match's opening, recording each as the
    referee tells it (clocks running down by each think time)."""
    state = engine.State(match.variant)
    for token in match.opening_actions:
        state.play(token)
    moves = live.Moves(match.pk, attempt)
    rnd = random.Random(seed)
    clocks = {"white": 5000, "black": 5000}
    played = []
    for _ in range(plies):
        color = state.turn.label
        action = rnd.choice(state.legal_actions())
        state.push(action)
        think = 40 + len(state.history)
        clocks[color] -= think
        p = Played(
            ply=len(state.history),
            color=color,
            action=str(action),
            think_ms=think,
            clocks_ms=(clocks["white"], clocks["black"]),
            turn=state.turn.label,
            info=f"SECRET-{color}-{len(state.history)}" if info else "",
        )
        moves([live.timed(p)])
        played.append(p)
    return played


def feed_json(pk: int, since: Any = None, client: Client | None = None) -> Any:
    query = {} if since is None else {"since": since}
    return (client or Client()).get(f"/matches/{pk}/live.json", query)


# ----------------------------------------------------------------------------- the feed


@pytest.mark.django_db
def test_the_feed_of_a_running_match_gives_its_actions_board_and_clocks(pair: Any) -> None:
    m, attempt = running_match(pair)
    played = play_some(m, attempt, 14)
    r = feed_json(m.pk)
    assert r.status_code == 200 and r["Cache-Control"] == "no-store"
    body = r.json()
    assert body["status"] == "running" and body["over"] is False
    assert body["plies"] == 14 and body["after"] == 0
    assert [f["action"] for f in body["frames"]] == [p.action for p in played]
    assert body["game"]["board"]["kind"] == "hex" and body["game"]["white"] == "white-bot v1"
    last = played[-1]
    clocks = body["clocks"]
    assert (clocks["white"]["ms"], clocks["black"]["ms"]) == last.clocks_ms
    assert clocks["turn"] == last.turn and clocks["running_ms"] >= 0
    assert clocks[last.color]["last_ms"] == last.think_ms
    assert body["score"] == "*"


@pytest.mark.django_db
def test_since_gives_only_the_new_actions(pair: Any) -> None:
    m, attempt = running_match(pair)
    played = play_some(m, attempt, 12)
    body = feed_json(m.pk, 9).json()
    assert body["after"] == 9 and body["game"] is None
    assert [f["n"] for f in body["frames"]] == [10, 11, 12]
    assert [f["action"] for f in body["frames"]] == [p.action for p in played[9:]]
    assert feed_json(m.pk, 12).json()["frames"] == []


@pytest.mark.django_db
def test_a_watcher_ahead_of_the_game_starts_afresh(pair: Any) -> None:
    """The match was started again (a new claim): the watcher's ply is past its end."""
    m, attempt = running_match(pair)
    play_some(m, attempt, 4)
    body = feed_json(m.pk, 30).json()
    assert body["after"] == 0 and len(body["frames"]) == 4 and body["game"] is not None


@pytest.mark.django_db
def test_a_new_claim_replaces_the_actions_of_the_old_one(pair: Any, settings: Any) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 8, seed=1)
    assert claims.release(Match, m.pk, attempt, "infrastructure failure: test")
    again = claims.claim(Match, m.pk, "test")
    assert again == attempt + 1
    m.refresh_from_db()
    played = play_some(m, again, 3, seed=2)
    body = feed_json(m.pk).json()
    assert body["attempt"] == again
    assert [f["action"] for f in body["frames"]] == [p.action for p in played]
    assert set(LiveMove.objects.filter(match=m).values_list("attempt", flat=True)) == {again}


@pytest.mark.django_db
def test_a_queued_match_shows_its_opening_and_full_clocks(pair: Any) -> None:
    m = queued_match(*pair, opening="e5 f6 g7 d4", time_control="7+0.1")
    body = feed_json(m.pk).json()
    assert body["status"] == "queued" and body["over"] is False
    assert [f["action"] for f in body["frames"]] == ["e5", "f6", "g7", "d4"]
    clocks = body["clocks"]
    assert clocks["white"] == clocks["black"] == {"ms": 7000, "last_ms": None}
    assert clocks["turn"] == "white" and clocks["running_ms"] is None


@pytest.mark.django_db
def test_a_finished_match_says_it_is_over_and_gives_its_record(pair: Any) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 2)
    result = fake_result()
    result.transcript["players"] = {"white": {"stderr_tail": "SECRET-STDERR"}}
    result.transcript["moves"][0]["info"] = {"pv": "SECRET-INFO"}
    assert services.finish(m.pk, attempt, result)
    assert not LiveMove.objects.filter(match=m).exists()  # the record holds the game now
    r = feed_json(m.pk)
    body = r.json()
    assert body["status"] == "finished" and body["over"] is True and body["clocks"] is None
    assert [f["action"] for f in body["frames"]] == ["e3", "a5"]
    assert body["score"] == "1-0" and body["termination"] == "time"
    assert b"SECRET" not in r.content  # the feed is public: no info, no stderr, for anyone


@pytest.mark.django_db
def test_the_feed_never_shows_info_or_stderr_even_to_the_owner(pair: Any, user: Any) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 2)
    result = fake_result()
    result.transcript["moves"][0]["info"] = {"pv": "SECRET-INFO"}
    assert services.finish(m.pk, attempt, result)
    owner = Client()
    owner.force_login(user)
    assert b"SECRET" not in feed_json(m.pk, client=owner).content


@pytest.mark.django_db
def test_a_running_games_info_reaches_its_owner_as_it_arrives_and_nobody_else(
    user: Any, other_user: Any, django_user_model: Any
) -> None:
    white, black = make_version(user, "white-bot"), make_version(other_user, "black-bot")
    m, attempt = running_match((white, black))
    played = play_some(m, attempt, 6, info=True)
    staff = django_user_model.objects.create_user("olga", password="x-long-password", is_staff=True)
    seen: dict[str, Any] = {}
    for who, viewer in (("alice", user), ("bob", other_user), ("olga", staff), ("nobody", None)):
        c = Client()
        if viewer is not None:
            c.force_login(viewer)
        seen[who] = feed_json(m.pk, client=c).json()
    infos = {who: {f["n"]: f.get("info") for f in body["frames"]} for who, body in seen.items()}
    assert infos["alice"] == {p.ply: p.info if p.color == "white" else None for p in played}
    assert infos["bob"] == {p.ply: p.info if p.color == "black" else None for p in played}
    assert infos["olga"] == {p.ply: p.info for p in played}
    assert set(infos["nobody"].values()) == {None}
    assert [seen[w]["logs"] for w in ("alice", "bob", "olga", "nobody")] == [
        ["white"],
        ["black"],
        ["white", "black"],
        [],
    ]
    # Think times are public: everyone has them.
    assert [f["think_ms"] for f in seen["nobody"]["frames"]] == [p.think_ms for p in played]
    # A later poll (since=4) brings the info of the actions after it.
    owner = Client()
    owner.force_login(user)
    tail = feed_json(m.pk, since=4, client=owner).json()
    assert [f.get("info") for f in tail["frames"]] == [
        p.info if p.color == "white" else None for p in played[4:]
    ]


@pytest.mark.django_db
def test_an_unknown_match_is_a_404_in_json() -> None:
    r = feed_json(999999)
    assert r.status_code == 404 and "no match 999999" in r.json()["error"]


@pytest.mark.django_db
@pytest.mark.parametrize("since", ["-1", "abc", "1.5", "", "٣", "9" * 30])
def test_a_bad_since_is_a_400_that_says_what_it_takes(pair: Any, since: str) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 3)
    r = feed_json(m.pk, since)
    if since == "9" * 30:  # a whole number, only far past the game: start afresh
        assert r.status_code == 200 and r.json()["after"] == 0
        return
    assert r.status_code == 400
    assert "since must be a ply number, 0 or more" in r.json()["error"]
    assert LiveMove.objects.filter(match=m).count() == 3


def test_a_negative_since_is_refused_by_the_service() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        live.feed(Match(), -1)


@pytest.mark.django_db
@pytest.mark.parametrize("actions", [1, 40, 1201])
def test_the_writer_inserts_many_actions_in_few_statements(pair: Any, actions: int) -> None:
    # A save per action held the worker's interpreter lock for most of a millisecond each,
    # while the game's own thread waited for it.
    m, attempt = running_match(pair)
    at = timezone.now().timestamp()
    played = [
        (
            Played(
                ply=ply,
                color="white" if ply % 2 else "black",
                action=f"P a{ply % 5 + 2}",
                think_ms=None if ply == 3 else 2.6,
                clocks_ms=(9000 - ply, 8000 - ply),
                turn="black" if ply % 2 else "white",
            ),
            at + ply,
        )
        for ply in range(1, actions + 1)
    ]
    with CaptureQueriesContext(connection) as queries:
        live.Moves(m.pk, attempt)(played)
    inserts = [q for q in queries if q["sql"].lstrip().upper().startswith("INSERT")]
    # As many rows a statement as the database takes parameters (99 on SQLite, 500 at most).
    assert len(inserts) == -(-actions // live._rows_a_statement())
    rows = list(LiveMove.objects.filter(match=m, attempt=attempt).order_by("ply"))
    assert [r.ply for r in rows] == [*range(1, actions + 1)]
    first = rows[0]
    assert (first.color, first.action, first.think_ms, first.white_ms, first.black_ms) == (
        "white",
        "P a3",
        3,
        8999,
        7999,
    )
    assert first.turn == "black" and first.at.timestamp() == pytest.approx(at + 1, abs=1e-3)
    if actions >= 3:
        assert rows[2].think_ms is None  # a forced pass: the bot was not asked


@pytest.mark.django_db(transaction=True)
def test_a_game_over_within_a_tick_costs_the_database_nothing(pair: Any) -> None:
    # In a worker the sidecar's first turn comes a tick after the game's start: a game over
    # sooner (the instant bots' games of a check) leaves no row.
    m, attempt = running_match(pair)
    sidecar = ThreadSidecar()
    sidecar.TICK_S = 30.0
    try:
        with sidecar.attach("match", lambda: True, 30.0, live.Moves(m.pk, attempt)) as tended:
            for played in play_some_actions(4):
                tended.note(live.timed(played))
    finally:
        sidecar.stop()
    assert not LiveMove.objects.filter(match=m).exists()


def play_some_actions(n: int) -> list[Played]:
    return [
        Played(
            ply=ply,
            color="white" if ply % 2 else "black",
            action=f"P a{ply + 1}",
            think_ms=1.0,
            clocks_ms=(9000, 9000),
            turn="black" if ply % 2 else "white",
        )
        for ply in range(1, n + 1)
    ]


# ----------------------------------------------------------------------------- the pages


@pytest.mark.django_db
def test_a_running_matchs_page_shows_the_live_board(pair: Any) -> None:
    m, attempt = running_match(pair)
    play_some(m, attempt, 3)
    page = Client().get(f"/matches/{m.pk}/").content.decode()
    assert f'data-live-url="/matches/{m.pk}/live.json"' in page
    assert "data-replay-url" not in page
    assert "arena/board.js" in page


@pytest.mark.django_db
def test_a_finished_matchs_page_shows_the_replay(pair: Any) -> None:
    m, attempt = running_match(pair)
    assert services.finish(m.pk, attempt, fake_result())
    page = Client().get(f"/matches/{m.pk}/").content.decode()
    assert f'data-replay-url="/matches/{m.pk}/replay.json"' in page
    assert "data-live-url" not in page


@pytest.mark.django_db
def test_the_home_page_links_to_games_in_progress(pair: Any) -> None:
    m, _ = running_match(pair)
    done, attempt = running_match(pair)
    assert services.finish(done.pk, attempt, fake_result())
    page = Client().get("/").content.decode()
    assert "Being played now" in page
    section = page.split("Being played now", 1)[1].split("</table>", 1)[0]
    assert f'href="/matches/{m.pk}/"' in section
    assert f'href="/matches/{done.pk}/"' not in section


@pytest.mark.django_db
def test_the_home_page_says_when_no_game_is_in_progress(pair: Any) -> None:
    assert "Being played now" not in Client().get("/").content.decode()


@pytest.mark.django_db
def test_a_tournament_page_links_to_its_games_in_progress(user: Any) -> None:
    entrants = [make_version(user, f"bot-{i}") for i in range(3)]
    t = tournaments.create(
        user,
        name="Live cup",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=1,
        bots=[v.bot for v in entrants],
    )
    queued = list(t.matches.filter(status=S.QUEUED))
    playing = queued[0]
    assert claims.claim(Match, playing.pk, "test")
    Match.objects.filter(pk=playing.pk).update(started_at=timezone.now())
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "Being played now" in page
    section = page.split("Being played now", 1)[1].split("</table>", 1)[0]
    assert f'href="/matches/{playing.pk}/"' in section
    for other in queued[1:]:
        assert f'href="/matches/{other.pk}/"' not in section
