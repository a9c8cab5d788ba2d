"""Remote bots end to end: the reference client (``bots/remote/client.py``, a real subprocess)
plays challenges through the real web server (pytest-django's live server) and a real Celery
worker in threads on the remote queue, against a bot in the sandbox.

Each test registers its remote bot through the API, challenges a sandboxed bot with it, and
starts the client with the example greedy bot as its program, as an author would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from arena.duels.models import Duel
from arena.games.models import Match, MatchRecord, RemoteGame, RemoteLine
from tests.arena.conftest import BOTS, QUEUE, ROOT, celery_worker, make_version, wait_for

CLIENT = ROOT / "bots" / "remote" / "client.py"


@pytest.fixture
def remote_worker(worker_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A real worker on this run's remote queue, in threads (as ``runarena`` starts it), with a
    short start-up timeout (a client that never connects loses by no-start within it)."""
    env = dict(worker_env, ARENA_BOT_STARTUP_SECONDS="3", ARENA_REMOTE_LATENCY_MS="500")
    with celery_worker(env, tmp_path / "remote.log", [f"{QUEUE}.remote"], pool="threads") as tail:
        yield tail


def _api(user: Any) -> tuple[APIClient, str]:
    token = Token.objects.create(user=user).key
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return api, token


#: The greedy example bot, which first says hello on its standard error (its owner's log).
GREEDY = [
    sys.executable,
    "-c",
    "import runpy, sys; print('remote-says-hi', file=sys.stderr, flush=True); "
    "runpy.run_path('main.py', run_name='__main__')",
]


def _client(site: str, token: str, bot: str, log: Path) -> subprocess.Popen[bytes]:
    """The reference client playing ``bot`` with the greedy example bot, started in its folder
    (the SDK and the engine on its path, as the sandbox gives them)."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'bots' / 'sdk'}{os.pathsep}{ROOT}")
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, str(CLIENT), "--server", site, "--token", token, "--bot", bot]
            + ["--", *GREEDY],
            cwd=BOTS / "greedy",
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _stop(client: subprocess.Popen[bytes]) -> None:
    if client.poll() is None:
        os.killpg(client.pid, signal.SIGKILL)  # the client and the program it started
    client.wait()


def _challenge(api: APIClient, candidate: int, opponent: int, time_control: str) -> Duel:
    r = api.post(
        "/api/duels/",
        {
            "kind": "challenge",
            "candidate": candidate,
            "opponent": opponent,
            "variant": "blitz",
            "time_control": time_control,
            "games": 2,
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    return Duel.objects.get(pk=r.json()["id"])


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_reference_client_plays_a_whole_challenge_through_the_remote_queue(
    remote_worker: Callable[[], str],
    live_server: Any,
    user: Any,
    other_user: Any,
    tmp_path: Path,
) -> None:
    api, token = _api(user)
    r = api.post(
        "/api/bots/", {"name": "far-greedy", "remote": True, "variants": ["blitz"]}, format="json"
    )
    assert r.status_code == 201, r.content
    assert r.json()["status"] == "active" and r.json()["kind"] == "remote"
    opponent = make_version(other_user, "near-random")
    duel = _challenge(api, r.json()["id"], opponent.pk, "20+0.2")
    ids = list(Match.objects.filter(duel=duel).values_list("pk", flat=True))
    assert len(ids) == 2
    client = _client(str(live_server.url), token, "far-greedy", tmp_path / "client.log")
    try:

        def log() -> str:
            return remote_worker() + "\n--- client ---\n" + (tmp_path / "client.log").read_text()

        wait_for(
            "the challenge",
            lambda: (
                Match.objects.filter(pk__in=ids, status__in=("finished", "aborted")).count() == 2
            ),
            log,
        )
    finally:
        _stop(client)
    stranger, _ = _api(other_user)  # the opponent's owner
    for match in Match.objects.filter(pk__in=ids):
        assert match.status == "finished", (match.reason, match.detail, log())
        assert match.termination in ("rows", "pool-exhausted", "no-moves"), match.reason
        assert match.worker.startswith("e2e-")
        remote_side = "white" if match.white.bot.name == "far-greedy" else "black"
        players = MatchRecord.objects.get(match=match).transcript["players"]
        assert players[remote_side]["ready"]["name"] == "greedy"  # its program said so
        assert players[remote_side]["move_overhead_ms"] == 500  # the latency allowance
        # Every line the referee sent but the last (end) was answered by the client.
        lines = RemoteLine.objects.filter(game__match=match).order_by("pk")
        assert lines.count() > 10
        assert all(line.answer is not None for line in lines[: lines.count() - 1])
        assert lines.last().line.startswith('{"type":"end"')  # type: ignore[union-attr]  # not empty
        # What the client forwarded of its stderr is its owner's log, nobody else's.
        assert "remote-says-hi" in players[remote_side]["stderr_tail"]
        url = f"/api/matches/{match.pk}/transcript/"
        assert "remote-says-hi" in api.get(url).content.decode()
        assert "remote-says-hi" not in APIClient().get(url).content.decode()
        assert "remote-says-hi" not in stranger.get(url).content.decode()
    assert not RemoteGame.objects.filter(match_id__in=ids, closed_at__isnull=True).exists()
    duel.refresh_from_db()
    assert duel.status == "finished"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_client_killed_mid_game_loses_that_game_on_time(
    remote_worker: Callable[[], str],
    live_server: Any,
    user: Any,
    other_user: Any,
    tmp_path: Path,
) -> None:
    api, token = _api(user)
    r = api.post("/api/bots/", {"name": "gone-greedy", "remote": True}, format="json")
    assert r.status_code == 201, r.content
    opponent = make_version(other_user, "near-random")
    duel = _challenge(api, r.json()["id"], opponent.pk, "4+0")
    ids = list(Match.objects.filter(duel=duel).values_list("pk", flat=True))
    client = _client(str(live_server.url), token, "gone-greedy", tmp_path / "client.log")
    killed: list[int] = []

    def some_answers() -> bool:
        for match_id in ids:
            answered = RemoteLine.objects.filter(game__match_id=match_id, answer__isnull=False)
            if (
                answered.count() >= 6
                and not Match.objects.filter(pk=match_id, status="finished").exists()
            ):
                killed.append(match_id)
                return True
        return False

    try:
        # Some actions into a game, the client (and its program) dies.
        wait_for("the client's answers", some_answers, remote_worker)
    finally:
        _stop(client)
    wait_for(
        "both games",
        lambda: Match.objects.filter(pk__in=ids, status__in=("finished", "aborted")).count() == 2,
        remote_worker,
    )
    match = Match.objects.get(pk=killed[0])
    remote_side = "white" if match.white.bot.name == "gone-greedy" else "black"
    assert (match.status, match.termination, match.fault) == ("finished", "time", remote_side), (
        match.reason
    )
    assert match.result != remote_side
    assert "ran out of time" in match.reason


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_remote_bot_whose_client_never_connects_loses_by_no_start(
    remote_worker: Callable[[], str], user: Any, other_user: Any
) -> None:
    api, _ = _api(user)
    r = api.post("/api/bots/", {"name": "absent", "remote": True}, format="json")
    assert r.status_code == 201, r.content
    opponent = make_version(other_user, "near-random")
    duel = _challenge(api, r.json()["id"], opponent.pk, "60+1")
    ids = list(Match.objects.filter(duel=duel).values_list("pk", flat=True))
    wait_for(
        "both games",
        lambda: Match.objects.filter(pk__in=ids, status__in=("finished", "aborted")).count() == 2,
        remote_worker,
    )
    for match in Match.objects.filter(pk__in=ids):
        remote_side = "white" if match.white.bot.name == "absent" else "black"
        assert (match.status, match.termination, match.fault) == (
            "finished",
            "no-start",
            remote_side,
        ), match.reason
        # Held up no longer than the start-up timeout (3 s here), not the 60 s clock.
        assert match.reason == f"{remote_side} sent no ready within 3 s"
        assert match.duration_s is not None and match.duration_s < 30
    assert not RemoteGame.objects.filter(match_id__in=ids, closed_at__isnull=True).exists()


@pytest.mark.django_db(transaction=True)
def test_the_client_stops_at_a_refusal_it_cannot_mend(live_server: Any, user: Any) -> None:
    _, token = _api(user)
    make_version(user, "near")  # not a remote bot
    for bot, key, said in (
        ("near", token, "not a remote bot"),
        ("near", "0" * 40, "401"),
    ):
        done = subprocess.run(
            [sys.executable, str(CLIENT), "--server", str(live_server.url), "--token", key]
            + ["--bot", bot, "--", sys.executable, "main.py"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 1, done.stderr
        assert said in done.stderr
