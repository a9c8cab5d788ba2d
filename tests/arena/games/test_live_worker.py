"""A real game played by the worker's service is written as it goes: the live feed follows it
action by action, then becomes the finished game's record."""

from __future__ import annotations

import threading
from typing import Any

import pytest

import engine
from arena.games import live, runner, services
from arena.games.models import LiveMove, Match, MatchRecord
from arena.jobs import claims
from arena.jobs.sidecar import ThreadSidecar
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import queued_match


@pytest.fixture
def pair(user: Any) -> tuple[Any, Any]:
    return make_version(user, "white-bot"), make_version(user, "black-bot")


def _reload(pk: int) -> Match:
    return Match.objects.select_related("white__bot", "black__bot").get(pk=pk)


@pytest.mark.django_db
def test_a_real_game_is_written_action_by_action_while_it_is_played(
    pair: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = queued_match(*pair, variant="blitz", opening="e5 f6 g7 d4", time_control="20+0.1")
    seen: list[tuple[LiveMove, Any]] = []
    write = live.Moves.__call__

    def watch(moves: live.Moves, actions: list[tuple[Any, float]]) -> None:
        # What a watcher polling now is told, every time the worker writes an action.
        write(moves, actions)
        for played, _ in actions:
            row = LiveMove.objects.get(match=m, attempt=moves.attempt, ply=played.ply)
            seen.append((row, live.feed(_reload(m.pk), since=row.ply - 1)))

    monkeypatch.setattr(live.Moves, "__call__", watch)
    assert services.play(m.pk, worker_name="test") == "finished"

    record = engine.Record.parse(MatchRecord.objects.get(match=m).record)
    actions = [str(a) for a in record.actions]
    assert len(seen) == len(actions) - 4  # every action of the bots, none of the opening's
    for row, feed in seen:
        assert feed["status"] == "running" and not feed["over"]
        assert feed["plies"] == row.ply  # the watcher sees the game up to this very action
        assert [f["action"] for f in feed["frames"]] == [actions[row.ply - 1]]
        clocks = feed["clocks"]
        assert clocks is not None
        assert (clocks["white"]["ms"], clocks["black"]["ms"]) == (row.white_ms, row.black_ms)
        assert clocks[row.color]["last_ms"] == row.think_ms
    assert [row.ply for row, _ in seen] == list(range(5, len(actions) + 1))
    # The clocks are the referee's own: the last ones written are those it ended with.
    players = MatchRecord.objects.get(match=m).transcript["players"]
    last = seen[-1][0]
    assert (last.white_ms, last.black_ms) == (
        players["white"]["clock_ms"],
        players["black"]["clock_ms"],
    )

    # Once over, the rows are gone and the feed is the record's, ready for the replay.
    assert not LiveMove.objects.filter(match=m).exists()
    end = live.feed(_reload(m.pk))
    assert end["over"] and end["status"] == "finished" and end["clocks"] is None
    assert [f["action"] for f in end["frames"]] == actions


@pytest.mark.django_db(transaction=True)
def test_a_worker_writes_the_actions_from_a_thread_while_the_game_goes_on(
    pair: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a worker the game never waits for the database: the process's sidecar writes each
    action from its own thread, on its own connection, while the referee plays on."""
    m = queued_match(*pair, variant="blitz", opening="e5 f6 g7 d4", time_control="20+0.1")
    attempt = claims.claim(Match, m.pk, "test")
    assert attempt is not None
    written = threading.Event()
    writers: list[str] = []
    waited: list[bool] = []

    write = live.Moves.__call__

    def saved(moves: live.Moves, actions: list[tuple[Any, float]]) -> None:
        write(moves, actions)
        writers.append(threading.current_thread().name)
        if any(played.ply == 6 for played, _ in actions):
            written.set()

    monkeypatch.setattr(live.Moves, "__call__", saved)
    sidecar = ThreadSidecar()
    with sidecar.attach("match", lambda: True, 30.0, live.Moves(m.pk, attempt)) as tended:

        def on_played(played: Any) -> None:
            tended.note(live.timed(played))
            if played.ply == 6:  # hold the game here until the thread has written it
                waited.append(written.wait(120))

        config = runner.game_config(
            variant="blitz",
            white=runner.load_spec(pair[0]),
            black=runner.load_spec(pair[1]),
            white_label="white-bot v1",
            black_label="black-bot v1",
            time_control="20+0.1",
            seed=1,
            event="test",
            opening="e5 f6 g7 d4",
        )
        result = runner.referee().play(config, on_played=on_played)
    sidecar.stop()
    assert waited == [True]
    assert set(writers) == {"sidecar"}
    rows = list(LiveMove.objects.filter(match=m, attempt=attempt).order_by("ply"))
    actions = [str(a) for a in result.record.actions]
    assert [r.ply for r in rows] == list(range(5, 5 + len(rows))) and len(rows) >= 2
    assert [r.action for r in rows] == actions[4 : 4 + len(rows)]
