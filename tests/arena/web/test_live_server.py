"""The tests on the live server end only when its requests have: a long poll or an event stream
still querying the database while the next test's flush empties the tables can make
PostgreSQL refuse the flush (a deadlock), and the next test then starts on the rows left."""

from __future__ import annotations

import threading
import time
import urllib.request
from typing import Any

import pytest
from rest_framework.authtoken.models import Token

from arena.bots import services as bots
from tests.conftest import live_requests, wait_for_live_requests


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_still_answered_when_its_test_ends_is_waited_for(
    live_server: Any, settings: Any, user: Any
) -> None:
    settings.REMOTE_WAIT_S = 3
    bots.create_remote_bot(user, "far", variants=["yinsh"])
    token, _ = Token.objects.get_or_create(user=user)
    answered: list[int] = []

    def client() -> None:  # a remote client's long poll, with nothing to give it
        request = urllib.request.Request(
            f"{live_server.url}/api/remote/far/events/?wait=3",
            headers={"Authorization": f"Token {token.key}"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            answered.append(response.status)

    thread = threading.Thread(target=client)
    thread.start()
    deadline = time.monotonic() + 30
    while not live_requests() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert live_requests(), "the long poll was never seen in the live server"

    assert wait_for_live_requests(60) == []
    thread.join(10)
    assert answered == [200]
