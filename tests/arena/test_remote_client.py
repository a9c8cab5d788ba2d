"""The reference client's own bookkeeping of a game (``bots/remote/client.py``), with a real
program: what its owner reads in the client's log."""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType

from tests.arena.conftest import ROOT


def load_client() -> ModuleType:
    spec = importlib.util.spec_from_file_location("remote_client", ROOT / "bots/remote/client.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: A program that takes a moment to exit once its input is closed, as a bot ending its search.
SLOW_TO_EXIT = [sys.executable, "-c", "import sys, time; sys.stdin.read(); time.sleep(1)"]


def test_a_game_told_it_is_over_again_while_its_program_exits_ends_once() -> None:
    client = load_client()
    said: list[str] = []
    game = client.Game(None, {"game": 7, "match": 3, "color": "white"}, SLOW_TO_EXIT, said.append)
    # The arena's end line, then every long poll until the program is gone: no longer open.
    game.finish()
    game.finish()
    game.finish()
    assert game.over.wait(30)
    for thread in threading.enumerate():  # the client's threads that stop the program
        if thread.name.endswith("(stop)"):
            thread.join(30)
    assert [s for s in said if s.endswith(": over")] == ["game 7 (match 3, white): over"]
    assert not any("before its game ended" in s for s in said), said
