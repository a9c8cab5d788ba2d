"""The benchmarks (tools/bench/) run against the arena as it is: each one's command line, the
synthetic data and the page and rating benchmarks on it, the start-up benchmark. They are
run small, and their figures are not checked: a benchmark's figures are its own business
(docs/benchmarks.md)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from arena.bots.models import Bot
from arena.games.models import Match
from arena.ratings.models import Rating, RatingPoint
from tests.browser import INSTALL_HINT, find_chromium
from tests.conftest import skip_unless_required
from tools.bench import __main__ as bench
from tools.bench import arena, data, ladder, push, remote, startup

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", sorted(bench.BENCHMARKS))
def test_each_benchmark_has_a_command_line(name: str) -> None:
    """``python -m tools.bench NAME --help`` loads the benchmark (and the arena's Django
    project when it needs it) and lists its options."""
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench", name, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith(f"usage: ./dev bench {name}")


def test_an_unknown_benchmark_is_refused_with_the_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["nope"]) == 2
    err = capsys.readouterr().err
    assert all(name in err for name in bench.BENCHMARKS)
    assert bench.main([]) == 2


@pytest.mark.django_db
def test_the_page_and_rating_benchmarks_run_on_the_synthetic_data(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert data.main(["--bots", "12", "--matches", "300", "--history", "3"]) == 0
    assert Bot.objects.filter(name__startswith=data.PREFIX).count() == 12
    assert Match.objects.filter(status=Match.Status.FINISHED).count() == 300
    assert Rating.objects.exists() and RatingPoint.objects.exists()

    assert arena.main(["pages", "--requests", "1"]) == 0
    out = capsys.readouterr().out
    for page in ("leaderboard", "leaderboard API", "bot page", "bot page (busiest)"):
        assert f"\n{page} " in out

    assert arena.main(["ratings", "--cold"]) == 0
    out = capsys.readouterr().out
    assert "300 finished matches" in out and "full recomputation:" in out

    data.clear()
    assert not Bot.objects.filter(name__startswith=data.PREFIX).exists()


def test_the_startup_benchmark_reports_the_bare_interpreter_and_the_bots(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert startup.main(["--runs", "1"]) == 0
    out = capsys.readouterr().out
    assert "bare python3 -c" in out
    for name in ("random", "greedy", "search"):
        assert f"{name} (SDK compiled)" in out and f"{name} (SDK as sources)" in out


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_ladder_benchmark_splits_a_games_time_through_a_real_worker(
    worker_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its worker (started by the benchmark, on a queue of its own) sees this test's database,
    broker and bot store."""
    names = ("DATABASE_URL", "ARENA_CELERY_BROKER_URL", "ARENA_BOT_CACHE", "ARENA_VAR_DIR")
    for name in names:
        if name in worker_env:
            monkeypatch.setenv(name, worker_env[name])
    from arena.celery import app as celery_app

    queue = celery_app.conf.task_default_queue
    try:
        assert ladder.main(["--games", "2", "--bots", "random", "random", "--time", "5+0.05"]) == 0
    finally:
        celery_app.conf.task_default_queue = queue
    out = capsys.readouterr().out
    assert "2 games random vs random at 5+0.05" in out
    assert "the arena's overhead: " in out and "% of its wall time" in out
    assert "games/min with 1 pool process(es)" in out
    assert "the worker's Python processes (bots left out): 2;" in out
    if connection.vendor == "postgresql":
        # The main process's connection and the pool process's (both kept open until the
        # worker stops, and the sampler looks a last time before that), and the sidecar's
        # (which the samples may miss in so short a run); other tests' connections are not
        # there (the test database is this process's own).
        held = re.search(r"database connections held by the worker: at most (\d+) at once", out)
        assert held is not None and 2 <= int(held[1]) <= 3, out
        assert re.search(r"per game: [0-9.]+ database commits, [0-9.]+ rows written", out)
    else:
        assert "database connections" not in out and "database commits" not in out
    if str(settings.CELERY_BROKER_URL).startswith("redis"):
        assert re.search(r"[0-9.]+ Redis commands, [0-9.]+ Redis bytes in and out", out)
    assert not Bot.objects.filter(name__startswith=ladder.PREFIX).exists()  # removed


@pytest.mark.worker
@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("server", sorted(push.SERVERS))
def test_the_push_benchmark_times_a_live_games_actions_to_a_real_browser(
    worker_env: dict[str, str], server: str
) -> None:
    """Run as its command (a browser of its own: the browser tests' may be running in this
    process); its site, which it starts (runserver, or gunicorn's threaded workers as in the
    image), sees this test's database and pushes the game to the browser."""
    if find_chromium() is None:
        skip_unless_required(INSTALL_HINT)
    done = subprocess.run(
        [sys.executable, "-m", "tools.bench", "push", "--moves", "4", "--every", "0.2"]
        + ["--server", server],
        cwd=ROOT,
        env=worker_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"pushed: 4 actions, one every 0.2 s, served by {server}" in done.stdout
    assert "median" in done.stdout
    assert not Bot.objects.filter(name__startswith=push.PREFIX).exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_remote_benchmark_measures_a_thread_worker_while_its_games_wait(
    worker_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Its worker (on a remote queue of its own, in threads) sees this test's database and
    broker; its clients answer in this process."""
    for name in ("DATABASE_URL", "ARENA_CELERY_BROKER_URL", "ARENA_VAR_DIR"):
        if name in worker_env:
            monkeypatch.setenv(name, worker_env[name])
    assert remote.main(["--games", "2", "--think", "4", "--window", "1"]) == 0
    out = capsys.readouterr().out
    assert "2 games waiting on their clients throughout" in out
    assert re.search(r"the worker: [0-9.]+% of a core, \d+ MiB resident, \d+ threads", out)
    if connection.vendor == "postgresql":
        assert re.search(r"the database: \d+ commits/s, \d+ connections held", out)
    assert not Bot.objects.filter(name__startswith=remote.PREFIX).exists()  # removed
