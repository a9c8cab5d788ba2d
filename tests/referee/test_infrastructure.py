"""Failures of the machine, not of a bot: they raise an InfrastructureError and blame no one.

Each kind of error a launch can raise (the sandbox refusing or unable to start, no free slot, a
cgroup that cannot be made, any other OSError) makes ``Referee.play`` raise an
:class:`~arena.referee.errors.InfrastructureError`: no result is recorded against either bot,
and no process of either bot is left.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.referee import GameConfig, Referee, RefereeError, TimeControl
from arena.referee.bots import BotSpec
from arena.referee.errors import InfrastructureError
from arena.referee.sandbox import (
    BotProcess,
    Sandbox,
    SandboxUnavailable,
    SlotsExhausted,
)
from arena.referee.sandbox.cgroups import CgroupError

from .games import ROOT, TEST_BOTS, builtin, play

LAUNCH_ERRORS = {
    "sandbox-unavailable": lambda: SandboxUnavailable("bubblewrap stopped working"),
    "slots-exhausted": lambda: SlotsExhausted("all 2 sandbox slots are in use"),
    "cgroup-error": lambda: CgroupError(errno.EACCES, "cannot write 536870912 to memory.max"),
    "os-error": lambda: OSError(errno.ENOSPC, "No space left on device"),
    "missing-folder": lambda: FileNotFoundError(errno.ENOENT, "No such file or directory"),
}


class FailingLaunches:
    """A sandbox whose launches fail from the ``fail_from``-th on (counting from 1)."""

    def __init__(self, sandbox: Sandbox, error: BaseException, fail_from: int) -> None:
        self._sandbox = sandbox
        self._error = error
        self._fail_from = fail_from
        self.launched: list[BotProcess] = []
        self.level = sandbox.level

    def launch(self, bot_dir: Path | str, argv: Sequence[str], *, trusted: bool = False) -> Any:
        if len(self.launched) + 1 >= self._fail_from:
            raise self._error
        bot = self._sandbox.launch(bot_dir, argv, trusted=trusted)
        self.launched.append(bot)
        return bot


@pytest.mark.parametrize("fail_from", [1, 2], ids=["white-launch", "black-launch"])
@pytest.mark.parametrize("kind", sorted(LAUNCH_ERRORS))
def test_a_launch_failure_raises_an_infrastructure_error_and_leaves_no_bot(
    full_sandbox: Callable[..., Sandbox], kind: str, fail_from: int
) -> None:
    sandbox = full_sandbox()
    failing = FailingLaunches(sandbox, LAUNCH_ERRORS[kind](), fail_from)
    bot = builtin("random")
    with pytest.raises(InfrastructureError) as caught:
        play(failing, bot, bot)  # type: ignore[arg-type]  # a stand-in for Sandbox
    assert caught.type in (SandboxUnavailable, SlotsExhausted, CgroupError, RefereeError)
    assert len(failing.launched) == fail_from - 1
    for launched in failing.launched:
        assert launched.poll() is not None and launched.stdin == -1, "a bot was left running"
    assert sandbox.running() == []


def test_every_infrastructure_error_of_the_referee_has_one_base() -> None:
    for error in (RefereeError, SandboxUnavailable, SlotsExhausted, CgroupError):
        assert issubclass(error, InfrastructureError), error
    assert issubclass(CgroupError, OSError), "callers catch cgroup failures as OSError too"
    assert CgroupError(errno.EBUSY, "busy").errno == errno.EBUSY


def test_a_referee_error_says_which_bot_could_not_be_started(
    full_sandbox: Callable[..., Sandbox],
) -> None:
    failing = FailingLaunches(full_sandbox(), OSError(errno.ENOSPC, "No space left"), 1)
    bot = builtin("random")
    config = GameConfig("yinsh", bot, bot, TimeControl.parse("30+0"))
    with pytest.raises(RefereeError, match=r"could not start random: .*No space left"):
        Referee(failing).play(config)  # type: ignore[arg-type]  # a stand-in for Sandbox


# ---------------------------------------------------------------- a sandbox that starts nothing


def private_copy(source: Path, parent: Path) -> Path:
    """A copy of a bot folder at 0700, as the site stores uploads: the sandbox must stage it."""
    target = parent / source.name
    shutil.copytree(source, target)
    target.chmod(0o700)
    return target


def test_a_sandbox_that_cannot_start_the_program_is_not_blamed_on_the_bot(
    breakable_sandbox: Callable[[], tuple[Sandbox, Callable[[], None]]], tmp_path: Path
) -> None:
    sandbox, break_it = breakable_sandbox()
    bot = BotSpec.load(private_copy(ROOT / "bots" / "random", tmp_path), trusted=False)
    assert play(sandbox, bot, builtin("random")).fault is None  # fine while reachable
    break_it()
    with pytest.raises(SandboxUnavailable) as caught:
        play(sandbox, bot, builtin("random"))
    message = str(caught.value)
    assert "the sandbox could not start white's program (random)" in message
    assert "before starting the program" in message
    assert sandbox.running() == []


def test_the_bot_is_still_blamed_when_its_own_command_does_not_exist(
    full_sandbox: Callable[..., Sandbox], tmp_path: Path
) -> None:
    folder = private_copy(ROOT / "bots" / "random", tmp_path)
    (folder / "bot.toml").write_text('name = "missing"\ncommand = "./no-such-program"\n')
    result = play(full_sandbox(), BotSpec.load(folder), builtin("random"))
    assert result.outcome.termination.value == "crash" and result.fault == "white"
    assert "exit code 127" in result.reason and "no-such-program" in result.reason


def test_setup_failure_is_none_for_a_program_that_started_and_failed(
    full_sandbox: Callable[..., Sandbox], tmp_path: Path
) -> None:
    sandbox = full_sandbox()
    folder = private_copy(TEST_BOTS / "honest" / "echo", tmp_path)
    for argv in (["python3", "-c", "import sys; sys.exit(3)"], ["./no-such-program"]):
        bot = sandbox.launch(folder, argv)
        assert bot.wait(10) is not None
        assert bot.setup_failure() is None, argv
        bot.kill()


def test_setup_failure_says_why_the_sandbox_could_not_start_the_program(
    breakable_sandbox: Callable[[], tuple[Sandbox, Callable[[], None]]], tmp_path: Path
) -> None:
    sandbox, break_it = breakable_sandbox()
    break_it()
    bot = sandbox.launch(private_copy(TEST_BOTS / "honest" / "echo", tmp_path), ["true"])
    assert bot.wait(10) == 1
    why = bot.setup_failure()
    assert why is not None and why.startswith("bubblewrap ended with exit status 1"), why
    assert "bwrap: " in why and "Permission denied" in why, why
    bot.kill()
    assert bot.setup_failure() is None  # once killed by the referee, there is nothing to tell
