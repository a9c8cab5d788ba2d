"""The time a bot may take to start (``ARENA_BOT_STARTUP_SECONDS``): a slow host raises it
rather than have sound bots lose their games, and their checks, by not starting."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.games import runner, services
from tests.arena.conftest import BOTS, make_version
from tests.arena.test_matches import queued_match


@pytest.fixture
def slow_starter(tmp_path: Path) -> Path:
    """The random bot, taking 2 s before it reads anything (as a Python bot may take to start
    on an emulated machine)."""
    folder = tmp_path / "slow-starter"
    shutil.copytree(BOTS / "random", folder)
    (folder / "main.py").rename(folder / "random_main.py")
    (folder / "main.py").write_text(
        "import runpy, time\ntime.sleep(2)\nrunpy.run_path('random_main.py', run_name='__main__')\n"
    )
    return folder


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
    white = make_version(user, "slow-starter", folder=slow_starter)
    black = make_version(user, "quick")
    m = queued_match(white, black)
    assert services.play(m.pk, "test") == "finished"
    m.refresh_from_db()
    if played:
        assert m.plies > 0 and not m.fault, m.reason
    else:
        assert m.plies == 0 and m.fault == "white"
        assert "no ready within 1 s" in m.reason
