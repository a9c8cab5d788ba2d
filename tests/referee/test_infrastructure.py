"""Failures of the machine, not of a bot: they raise an InfrastructureError and blame no one.

Each kind of error a launch can raise (the sandbox refusing or unable to start, no free slot, a
cgroup that cannot be made, any other OSError) makes ``Referee.play`` raise an
:class:`~arena.referee.errors.InfrastructureError`: no result is recorded against either bot,
and no process of either bot is left.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from arena.referee.errors import InfrastructureError
from arena.referee.match import GameConfig, Referee, RefereeError, TimeControl
from arena.referee.sandbox import (
    BotProcess,
    Sandbox,
    SandboxUnavailable,
    SlotsExhausted,
)
from arena.referee.sandbox.cgroups import CgroupError

from .games import builtin, play

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
