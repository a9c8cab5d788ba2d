"""The remote transport (arena.games.remote): the referee's side of a remote bot, relayed
through the database, with what a client would post written by the services it calls."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from arena.bots import services as bots
from arena.games import remote
from arena.games.models import Match, RemoteGame, RemoteLine
from arena.jobs import claims
from arena.referee.transport import Cancelled, Closed, LineTooLong, Timeout
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import queued_match


@pytest.fixture
def transport(user: Any, other_user: Any) -> remote.RemoteTransport:
    mine = bots.create_remote_bot(user, "far")
    match = queued_match(mine, make_version(other_user, "near"))
    attempt = claims.claim(Match, match.pk)
    assert attempt is not None
    return remote.RemoteTransport(match, attempt, "white", mine.bot_id, line_limit=100)


@pytest.mark.django_db
def test_a_line_sent_is_answered_by_the_client(transport: remote.RemoteTransport) -> None:
    transport.send(b'{"type":"hello"}\n', time.monotonic() + 5)
    line = RemoteLine.objects.get(game=transport.game)
    assert line.line == '{"type":"hello"}' and line.answer is None
    remote.answer(transport.game.bot, transport.game.pk, line.pk, '{"type":"ready"}')
    assert transport.receive(time.monotonic() + 5) == b'{"type":"ready"}\n'


@pytest.mark.django_db
def test_no_answer_by_the_deadline_is_a_timeout(transport: remote.RemoteTransport) -> None:
    transport.send(b'{"type":"request"}\n', time.monotonic() + 5)
    with pytest.raises(Timeout):
        transport.receive(time.monotonic() + 0.2)


@pytest.mark.django_db
def test_a_cancelled_game_stops_waiting(transport: remote.RemoteTransport) -> None:
    transport.cancel = threading.Event()
    transport.cancel.set()
    transport.send(b'{"type":"request"}\n', time.monotonic() + 5)
    with pytest.raises(Cancelled):
        transport.receive(time.monotonic() + 60)


@pytest.mark.django_db
def test_an_answer_over_the_line_cap_is_too_long(transport: remote.RemoteTransport) -> None:
    transport.send(b'{"type":"request"}\n', time.monotonic() + 5)
    seq = RemoteLine.objects.get(game=transport.game).pk
    remote.answer(transport.game.bot, transport.game.pk, seq, "x" * 101)
    with pytest.raises(LineTooLong):
        transport.receive(time.monotonic() + 5)


@pytest.mark.django_db
def test_the_forwarded_stderr_is_read_and_a_kill_closes_the_game(
    transport: remote.RemoteTransport,
) -> None:
    remote.add_log(transport.game.bot, transport.game.pk, "thinking\n")
    transport.drain_stderr()
    assert (transport.stderr_tail, transport.stderr_bytes) == ("thinking\n", 9)
    assert transport.poll() is None and transport.cpu_seconds() == 0.0
    assert transport.violation() is None and transport.setup_failure() is None
    transport.kill()
    assert RemoteGame.objects.get(pk=transport.game.pk).closed_at is not None
    assert transport.poll() == 0
    with pytest.raises(Closed):
        transport.send(b"{}\n", time.monotonic() + 1)
