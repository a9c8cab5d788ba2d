"""A worker process's heartbeats (``arena.worker.Heartbeat``): every running game of the process
beaten from one thread at its interval, a lost claim cancelling its own game only, and no beat
after a game's end."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import OperationalError

from arena.worker import Heartbeat


class Beats:
    """A game's beat: counts its calls and the threads they came from; answers ``owned``."""

    def __init__(self, owned: Callable[[int], bool] = lambda n: True) -> None:
        self.owned = owned
        self.calls = 0
        self.threads: set[str] = set()
        self.reached = threading.Condition()

    def __call__(self) -> bool:
        with self.reached:
            self.calls += 1
            self.threads.add(threading.current_thread().name)
            self.reached.notify_all()
            n = self.calls
        return self.owned(n)

    def wait_for(self, calls: int) -> None:
        with self.reached:
            assert self.reached.wait_for(lambda: self.calls >= calls, timeout=30), self.calls


def heartbeat_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "heartbeat"]


def test_one_thread_beats_every_game_of_the_process_and_none_after_its_end() -> None:
    first, second = Beats(), Beats()
    with Heartbeat(first, 0.02):
        with Heartbeat(second, 0.03):
            first.wait_for(3)
            second.wait_for(3)
        ended_at = second.calls
        first.wait_for(first.calls + 3)  # the thread went on for the first game only
    assert second.calls == ended_at
    assert first.threads == second.threads == {"heartbeat"}
    assert len(heartbeat_threads()) == 1
    third = Beats()
    with Heartbeat(third, 0.02):  # the next game: the same thread
        third.wait_for(2)
    assert len(heartbeat_threads()) == 1


def test_a_lost_claim_cancels_its_own_game_only() -> None:
    lost, kept = Beats(owned=lambda n: n < 2), Beats()
    with Heartbeat(lost, 0.02) as a, Heartbeat(kept, 0.02) as b:
        assert a.cancel.wait(30)
        kept.wait_for(lost.calls + 3)
        assert lost.calls == 2 and not b.cancel.is_set()


def test_a_beat_that_fails_is_logged_and_tried_again(caplog: pytest.LogCaptureFixture) -> None:
    def owned(n: int) -> bool:
        if n == 1:
            raise OperationalError("the server closed the connection")
        if n == 2:
            raise RuntimeError("a defect")
        return True

    beats = Beats(owned)
    with Heartbeat(beats, 0.02) as hb:
        beats.wait_for(4)
    assert not hb.cancel.is_set()
    assert "heartbeat failed: the server closed the connection" in caplog.text
    assert "RuntimeError: a defect" in caplog.text


def test_a_game_shorter_than_the_interval_never_beats() -> None:
    beats = Beats()
    with Heartbeat(beats, 30.0):
        pass
    assert beats.calls == 0
