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
from django.test import Client
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


#: A Python bot using the SDK on a machine where the SDK is not installed (``-I``: the path
#: the client is given does not reach it): it dies at its first line.
NO_SDK = [sys.executable, "-I", "-c", "import yinshbot\nyinshbot.main(lambda r: r.actions[0])"]


def _client(
    site: str, token: str, bot: str, log: Path, program: list[str] = GREEDY
) -> subprocess.Popen[bytes]:
    """The reference client playing ``bot`` with ``program`` (the greedy example bot), started
    in the greedy bot's folder (the SDK and the engine on its path, as the sandbox gives
    them)."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'bots' / 'sdk'}{os.pathsep}{ROOT}")
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, str(CLIENT), "--server", site, "--token", token, "--bot", bot]
            + ["--", *program],
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


@pytest.fixture
def patient_remote_worker(
    worker_env: dict[str, str], tmp_path: Path
) -> Iterator[Callable[[], str]]:
    """A remote worker as :func:`remote_worker`, whose bots have 20 s to start: long enough
    that a client's report of its program's death reaches the game before it is lost."""
    env = dict(worker_env, ARENA_BOT_STARTUP_SECONDS="20", ARENA_REMOTE_LATENCY_MS="500")
    with celery_worker(env, tmp_path / "remote.log", [f"{QUEUE}.remote"], pool="threads") as tail:
        yield tail


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_program_that_dies_at_start_is_reported_at_once_with_its_stderr(
    patient_remote_worker: Callable[[], str],
    live_server: Any,
    user: Any,
    other_user: Any,
    tmp_path: Path,
) -> None:
    api, token = _api(user)
    r = api.post("/api/bots/", {"name": "no-sdk", "remote": True}, format="json")
    assert r.status_code == 201, r.content
    opponent = make_version(other_user, "near-random")
    duel = _challenge(api, r.json()["id"], opponent.pk, "60+1")
    ids = list(Match.objects.filter(duel=duel).values_list("pk", flat=True))
    client_log = tmp_path / "client.log"
    client = _client(str(live_server.url), token, "no-sdk", client_log, NO_SDK)

    def log() -> str:
        return patient_remote_worker() + "\n--- client ---\n" + client_log.read_text()

    said = "the program exited with status 1 before its game ended"
    try:
        # The client says so on its console as soon as the program is gone...
        wait_for("the client's report", lambda: said in client_log.read_text(), log)
        console = client_log.read_text()
        assert "ModuleNotFoundError: No module named 'yinshbot'" in console
        assert "yinsh-sdk.zip" in console  # and how to install the SDK
        # ...and sends its standard error to the game, while the game waits for its ready.
        wait_for(
            "the log in the game",
            lambda: RemoteGame.objects.filter(
                bot__name="no-sdk", stderr_tail__contains="No module named 'yinshbot'"
            ).exists(),
            log,
        )
        game = RemoteGame.objects.get(bot__name="no-sdk", stderr_tail__contains="yinshbot")
        assert game.match_id in ids
        assert f"game {game.pk} (match {game.match_id}, {game.color}): {said}" in console
        assert said in game.stderr_tail
        wait_for(
            "the game's end",
            lambda: Match.objects.filter(pk=game.match_id, status="finished").exists(),
            log,
        )
    finally:
        _stop(client)
    match = Match.objects.get(pk=game.match_id)
    assert (match.termination, match.fault) == ("no-start", game.color), match.reason
    assert match.reason == f"{game.color} sent no ready within 20 s"
    # Its owner reads why on the game's page (the reason quotes the program's last words);
    # nobody else does.
    assert match.detail.startswith(f"{match.reason}; stderr: "), match.detail
    assert match.detail.endswith("ModuleNotFoundError: No module named 'yinshbot'"), match.detail
    page = f"/matches/{match.pk}/"
    owner = Client()
    owner.force_login(user)
    assert "No module named &#x27;yinshbot&#x27;" in owner.get(page).content.decode()
    assert "No module named" not in Client().get(page).content.decode()


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
