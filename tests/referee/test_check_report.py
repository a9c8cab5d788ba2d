"""A check's report speaks of the bot being checked by its name, not by the colour it played."""

from __future__ import annotations

from collections.abc import Callable

from arena.referee import Referee
from arena.referee.bots import BotSpec
from arena.referee.conformance import check_bot, name_the_players
from arena.referee.sandbox import Sandbox

from .games import TEST_BOTS


def test_a_reason_names_the_player_at_fault_instead_of_its_colour() -> None:
    names = {"white": "mybot", "black": "random"}
    assert (
        name_the_players("white broke the protocol at ply 1: not JSON", names)
        == "mybot broke the protocol at ply 1: not JSON"
    )
    assert name_the_players("black ran out of time", names) == "random ran out of time"
    assert name_the_players("the sandbox could not start", names) == "the sandbox could not start"
    assert name_the_players("whitebox exited", names) == "whitebox exited"


def test_a_failed_check_says_what_the_bot_did_by_its_name(
    sandboxed: Callable[..., Sandbox],
) -> None:
    spec = BotSpec.load(TEST_BOTS / "protocol" / "garbage_json")
    report = check_bot(spec, games=1, referee=Referee(sandboxed()))
    assert not report.ok
    (failed,) = [line for line in report.lines if line.startswith("FAIL  game 1")]
    assert "garbage_json as white" in failed
    assert ": garbage_json broke the protocol at ply 1" in failed
    assert "white broke" not in failed
    assert report.failure.startswith("game 1 (yinsh, garbage_json as white, ")
    assert "garbage_json broke the protocol" in report.failure


def test_a_bot_that_never_starts_is_named_in_the_start_up_line(
    sandboxed: Callable[..., Sandbox],
) -> None:
    # Two seconds to say ready (ten by default): the bot never will.
    referee = Referee(sandboxed(), startup_timeout_s=2.0)
    report = check_bot(BotSpec.load(TEST_BOTS / "protocol" / "no_ready"), games=1, referee=referee)
    (failed,) = [line for line in report.lines if line.startswith("FAIL  start-up")]
    assert failed.startswith("FAIL  start-up: no_ready ") and "white" not in failed
    assert report.failure.startswith("start-up: no_ready ")
