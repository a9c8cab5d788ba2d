"""The sidecar that tends claimed work while it runs (``arena.jobs.sidecar``): a worker
process's one thread beats every claim at its interval and publishes what each game notes; a
lost claim cancels its own work only; nothing is tended after the work's end. The inline
sidecar does the same on the work's own thread."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import OperationalError, connection

from arena.jobs.sidecar import InlineSidecar, ThreadSidecar

# The thread opens a database connection of its own (to set it up): allowed, and closed by
# the fixture's stop().
pytestmark = pytest.mark.django_db(transaction=True)


class Beats:
    """A claim's beat: counts its calls and the threads they came from; answers ``owned``."""

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


class Published:
    """What a sidecar published, batch by batch."""

    def __init__(self) -> None:
        self.batches: list[list[Any]] = []
        self.reached = threading.Condition()

    def __call__(self, items: list[Any]) -> None:
        with self.reached:
            self.batches.append(items)
            self.reached.notify_all()

    @property
    def items(self) -> list[Any]:
        return [item for batch in self.batches for item in batch]

    def wait_for(self, count: int) -> None:
        with self.reached:
            assert self.reached.wait_for(lambda: len(self.items) >= count, timeout=30)


@pytest.fixture
def sidecar() -> Iterator[ThreadSidecar]:
    car = ThreadSidecar()
    car.TICK_S = 0.01
    yield car
    car.stop()


def sidecar_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "sidecar"]


def test_one_thread_beats_every_claim_of_the_process_and_none_after_its_end(
    sidecar: ThreadSidecar,
) -> None:
    first, second = Beats(), Beats()
    with sidecar.attach("match 1", first, 0.02):
        with sidecar.attach("match 2", second, 0.03):
            first.wait_for(3)
            second.wait_for(3)
        ended_at = second.calls
        first.wait_for(first.calls + 3)  # the thread went on for the first game only
    assert second.calls == ended_at
    assert first.threads == second.threads == {"sidecar"}
    assert len(sidecar_threads()) == 1
    third = Beats()
    with sidecar.attach("match 3", third, 0.02):  # the next game: the same thread
        third.wait_for(2)
    assert len(sidecar_threads()) == 1


def test_what_a_game_notes_is_published_in_order_and_nothing_after_its_end(
    sidecar: ThreadSidecar,
) -> None:
    published = Published()
    with sidecar.attach("match 1", Beats(), 30.0, published) as tended:
        for n in range(50):
            tended.note(n)
        published.wait_for(50)
        tended.note("late")  # noted, but the game ends before the next turn...
        sidecar.TICK_S = 30.0
    assert published.items == list(range(50))  # ...so it is never published


def test_a_lost_claim_cancels_its_own_work_only(sidecar: ThreadSidecar) -> None:
    lost, kept = Beats(owned=lambda n: n < 2), Beats()
    with sidecar.attach("match 1", lost, 0.02) as a, sidecar.attach("match 2", kept, 0.02) as b:
        assert a.cancel.wait(30)
        kept.wait_for(lost.calls + 3)
        assert lost.calls >= 2 and not b.cancel.is_set()


def test_a_beat_that_fails_is_logged_and_tried_again(
    sidecar: ThreadSidecar, caplog: pytest.LogCaptureFixture
) -> None:
    def owned(n: int) -> bool:
        if n == 1:
            raise OperationalError("the server closed the connection")
        if n == 2:
            raise RuntimeError("a defect")
        return True

    beats = Beats(owned)
    with sidecar.attach("match 1", beats, 0.02) as tended:
        beats.wait_for(4)
    assert not tended.cancel.is_set()
    assert "match 1: heartbeat failed: the server closed the connection" in caplog.text
    assert "RuntimeError: a defect" in caplog.text


def test_a_publish_that_fails_stops_the_live_view_never_the_game(
    sidecar: ThreadSidecar, caplog: pytest.LogCaptureFixture
) -> None:
    calls = []

    def publish(items: list[Any]) -> None:
        calls.append(items)
        raise OperationalError("disk full")

    beats = Beats()
    with sidecar.attach("match 1", beats, 0.02, publish) as tended:
        tended.note(1)
        beats.wait_for(3)
        tended.note(2)
        beats.wait_for(beats.calls + 3)
    assert calls == [[1]] and not tended.cancel.is_set()
    assert "match 1: its live view is no longer written: disk full" in caplog.text


def test_work_shorter_than_the_interval_never_beats(sidecar: ThreadSidecar) -> None:
    beats = Beats()
    with sidecar.attach("match 1", beats, 30.0):
        pass
    assert beats.calls == 0


def test_the_end_of_the_work_waits_for_a_turn_under_way(sidecar: ThreadSidecar) -> None:
    inside, release = threading.Event(), threading.Event()
    done: list[str] = []

    def slow_publish(items: list[Any]) -> None:
        inside.set()
        release.wait(30)
        done.append("published")

    def end() -> None:
        with sidecar.attach("match 1", Beats(), 30.0, slow_publish) as tended:
            tended.note(1)
            assert inside.wait(30)
        done.append("ended")

    game = threading.Thread(target=end)
    game.start()
    assert inside.wait(30)
    game.join(0.2)
    assert game.is_alive() and done == []  # the game's end waits for the publishing
    release.set()
    game.join(30)
    assert done == ["published", "ended"]


def test_stopping_ends_the_thread_and_the_next_work_starts_another(
    sidecar: ThreadSidecar,
) -> None:
    beats = Beats()
    with sidecar.attach("match 1", beats, 0.01):
        beats.wait_for(1)
    sidecar.stop()
    assert sidecar_threads() == []
    with sidecar.attach("match 2", beats, 0.01):
        beats.wait_for(beats.calls + 1)
    assert len(sidecar_threads()) == 1


def test_the_inline_sidecar_publishes_at_once_and_beats_when_its_turn_has_come() -> None:
    published, beats = Published(), Beats()
    with InlineSidecar().attach("match 1", beats, 0.0, published) as tended:
        tended.note(1)
        assert published.batches == [[1]] and beats.calls == 1
        assert beats.threads == {threading.current_thread().name}
    with InlineSidecar().attach("match 2", beats, 30.0, published) as tended:
        tended.note(2)
    assert published.batches == [[1], [2]] and beats.calls == 1


def test_the_sidecars_writes_do_not_wait_for_the_disk_and_the_works_own_do(
    sidecar: ThreadSidecar,
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("synchronous_commit is PostgreSQL's")

    def setting() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            return str(cursor.fetchone()[0])

    seen = Published()
    with sidecar.attach("match 1", Beats(), 30.0, lambda items: seen([setting()])) as tended:
        tended.note(1)
        seen.wait_for(1)
    assert seen.items == ["off"]  # a heartbeat or a live move lost in a crash is made good
    assert setting() != "off"  # the result is written durably
