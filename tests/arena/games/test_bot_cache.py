"""A worker's bot caches: what a game loads is held in use until it ends, idle bots are
evicted at the worker's first game and then every ``BOT_CACHE_EVICT_INTERVAL_S``, and an
evicted bot is simply unpacked again when it plays next."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from arena.games import runner
from tests.arena.conftest import BOTS, make_version


def age(folder: Path, hours: float) -> None:
    """Make every entry of the cache folder, and its record of use, ``hours`` old."""
    t = time.time() - hours * 3600
    for p in folder.iterdir():
        os.utime(p, (t, t))


@pytest.fixture
def evicted_just_now(settings: Any) -> None:
    """This process has just evicted: ``bots_in_use`` starts no eviction of its own during
    the test (the test calls :func:`runner.evict` itself)."""
    settings.BOT_CACHE_EVICT_INTERVAL_S = 0
    thread = runner.evict_if_due()
    assert thread is not None
    thread.join()
    settings.BOT_CACHE_EVICT_INTERVAL_S = 10**9


def removed() -> list[str]:
    report = runner.evict()
    assert report is not None
    return report.removed


@pytest.mark.django_db
@pytest.mark.usefixtures("evicted_just_now")
def test_a_bot_in_use_stays_and_is_evicted_once_idle(user: Any, settings: Any) -> None:
    settings.BOT_CACHE_IDLE_HOURS = 72
    version = make_version(user, "mybot")
    cache = Path(settings.BOT_CACHE_DIR)
    with runner.bots_in_use():
        spec = runner.unpack_spec(version)
        age(cache, 100)  # a game longer than the idle time
        report = runner.evict()
        assert report is not None
        assert report.removed == [] and report.in_use == [f"cache/{version.sha256}"]
        assert spec.path.exists()
    assert removed() == []  # the game just ended: its last use is now
    age(cache, 100)
    assert removed() == [f"cache/{version.sha256}"]
    assert not spec.path.exists()
    again = runner.unpack_spec(version)  # the next game unpacks it again
    assert again.path.exists() and again.digest == spec.digest


@pytest.mark.django_db
@pytest.mark.usefixtures("evicted_just_now")
def test_the_size_cap_keeps_the_bots_of_the_running_game(user: Any, settings: Any) -> None:
    settings.BOT_CACHE_IDLE_HOURS = 0
    settings.BOT_CACHE_MAX_MB = 0
    old = make_version(user, "old")
    playing = make_version(user, "playing", folder=BOTS / "greedy")
    runner.unpack_spec(old)
    with runner.bots_in_use():
        runner.unpack_spec(playing)
        settings.BOT_CACHE_MAX_MB = 1e-6  # a byte: less than any bot
        report = runner.evict()
    assert report is not None and report.removed == [f"cache/{old.sha256}"]
    assert report.in_use == [f"cache/{playing.sha256}"]


@pytest.mark.django_db
def test_eviction_runs_at_the_first_game_then_once_per_interval(user: Any, settings: Any) -> None:
    settings.BOT_CACHE_IDLE_HOURS = 1
    version = make_version(user, "mybot")
    runner.unpack_spec(version)
    age(Path(settings.BOT_CACHE_DIR), 2)
    settings.BOT_CACHE_EVICT_INTERVAL_S = 0  # as if this process had just started
    thread = runner.evict_if_due()
    assert thread is not None
    thread.join()
    assert not (Path(settings.BOT_CACHE_DIR) / version.sha256).exists()
    settings.BOT_CACHE_EVICT_INTERVAL_S = 3600
    runner.unpack_spec(version)
    age(Path(settings.BOT_CACHE_DIR), 2)
    with runner.bots_in_use():  # within the interval: no eviction
        assert runner.evict_if_due() is None
    assert (Path(settings.BOT_CACHE_DIR) / version.sha256).is_dir()


@pytest.mark.django_db
@pytest.mark.usefixtures("evicted_just_now")
def test_operators_can_evict_now_with_a_command(user: Any, settings: Any) -> None:
    version = make_version(user, "mybot")
    runner.unpack_spec(version)
    out = io.StringIO()
    call_command("evict_bots", stdout=out)  # used just now: stays
    assert out.getvalue().startswith("removed 0 bots (0.0 MiB)")
    call_command("evict_bots", "--max-mb", "0.000001", stdout=out)
    assert "removed 1 bots" in out.getvalue()
    assert not (Path(settings.BOT_CACHE_DIR) / version.sha256).exists()
    with pytest.raises(CommandError, match="cannot be negative"):
        call_command("evict_bots", "--idle-hours", "-1")
