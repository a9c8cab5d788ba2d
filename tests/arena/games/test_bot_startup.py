"""The time a bot may take to start and to exit (``ARENA_BOT_STARTUP_SECONDS``,
``ARENA_BOT_EXIT_SECONDS``): a slow host raises them rather than have sound bots lose their
games, and fail their checks, for being slow to start or to stop."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.games import runner, services
from arena.games.models import Match, MatchRecord
from tests.arena.conftest import BOTS, make_version
from tests.arena.games.test_matches import queued_match


def random_bot_after(prelude: str, folder: Path) -> Path:
    """The random bot in ``folder``, its program run after the Python lines ``prelude``."""
    shutil.copytree(BOTS / "random", folder)
    (folder / "main.py").rename(folder / "random_main.py")
    (folder / "main.py").write_text(
        f"import runpy\n{prelude}\nrunpy.run_path('random_main.py', run_name='__main__')\n"
    )
    return folder


def play_against_random(user: Any, folder: Path) -> Match:
    """A match of the bot in ``folder`` (white) against the random bot, played here."""
    m = queued_match(make_version(user, folder.name, folder=folder), make_version(user, "quick"))
    assert services.play(m.pk, "test") == "finished"
    m.refresh_from_db()
    return m


@pytest.fixture
def slow_starter(tmp_path: Path) -> Path:
    """The random bot, taking 2 s before it reads anything (as a Python bot may take to start
    on an emulated machine)."""
    return random_bot_after("import time; time.sleep(2)", tmp_path / "slow-starter")


@pytest.fixture(autouse=True)
def fresh_referee() -> Iterator[None]:
    runner.referee.cache_clear()  # made from the settings of the moment
    yield
    runner.referee.cache_clear()


@pytest.mark.parametrize(("seconds", "played"), [(1, False), (8, True)])
@pytest.mark.django_db
def test_a_bot_slower_to_start_than_the_allowance_loses_and_one_within_it_plays(
    settings: Any, user: Any, slow_starter: Path, seconds: int, played: bool
) -> None:
    settings.BOT_STARTUP_SECONDS = seconds
    m = play_against_random(user, slow_starter)
    if played:
        assert m.plies > 0 and not m.fault, m.reason
    else:
        assert m.plies == 0 and m.fault == "white"
        assert "no ready within 1 s" in m.reason


@pytest.fixture
def slow_exiter(tmp_path: Path) -> Path:
    """The random bot, taking 2 s to exit after its game (as a Python bot may under
    emulation)."""
    return random_bot_after(
        "import atexit, time; atexit.register(time.sleep, 2)", tmp_path / "slow-exiter"
    )


@pytest.mark.parametrize(("seconds", "killed"), [(1, True), (8, False)])
@pytest.mark.django_db
def test_a_bot_slower_to_exit_than_the_allowance_is_killed_and_one_within_it_exits(
    settings: Any, user: Any, slow_exiter: Path, seconds: int, killed: bool
) -> None:
    settings.BOT_EXIT_SECONDS = seconds
    m = play_against_random(user, slow_exiter)
    assert m.plies > 0 and not m.fault, m.reason
    players = MatchRecord.objects.get(match=m).transcript["players"]
    assert bool(players["white"].get("killed_after_grace")) is killed
    assert not players["black"].get("killed_after_grace")
