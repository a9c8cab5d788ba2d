"""A scripted stand-in for a bot process, on a fake clock: the game loop's tests use it.

A :class:`FakeBot` answers each referee message through a ``brain`` function that returns what
the bot does: a line (bytes or a dict to encode), after some thinking time, or one of the
failures below. Time passes only on the :class:`FakeClock`, so no test sleeps.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.referee import protocol
from arena.referee.transport import Cancelled, Closed, LineTooLong, Timeout


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@dataclass
class Think:
    """Answer ``line`` after ``ms`` milliseconds, having written ``stderr`` meanwhile."""

    ms: float
    line: Any
    stderr: bytes = b""


@dataclass
class Exit:
    """The bot exits (after ``ms``) with this status, having written ``stderr``."""

    code: int = 1
    stderr: bytes = b""
    ms: float = 0.0


class Hang:
    """The bot never answers."""


class Endless:
    """The bot writes without a newline past the line limit."""


@dataclass
class Violation:
    kind: str
    message: str


Brain = Callable[[Any], Any]


def first_legal(message: Any) -> Any:
    """The simplest bot: ready, then the first legal action."""
    if isinstance(message, protocol.Hello):
        return {"type": "ready", "name": "fake", "version": "1"}
    if isinstance(message, protocol.Request):
        return {"type": "action", "action": message.actions[0]}
    return None


class FakeBot:
    """A transport whose bot is a Python function (see the module docstring)."""

    def __init__(self, clock: FakeClock, brain: Brain = first_legal, *, line_limit: int = 65536):
        self.clock = clock
        self.brain = brain
        self.line_limit = line_limit
        self.queue: deque[Any] = deque()
        self.received: list[Any] = []
        self.stderr = bytearray()
        self.stderr_bytes = 0
        self.returncode: int | None = None
        self.input_closed = False
        self.killed = False
        self.paused = False
        self.pauses = 0
        self.the_violation: Violation | None = None
        self.ignores_end = False
        self.extra_output = b""
        self.cancel_at_ply: tuple[Any, int] | None = None

    # what the referee calls
    @property
    def stderr_tail(self) -> str:
        return self.stderr[-4096:].decode("utf-8", "replace")

    def send(self, data: bytes, deadline: float) -> None:
        assert not self.paused, "the referee wrote to a paused bot"
        if self.returncode is not None or self.input_closed:
            raise Closed("broken pipe")
        message = protocol.decode_referee_message(data)
        self.received.append(message)
        result = self.brain(message)
        if result is not None:
            self.queue.append(result)

    def receive(self, deadline: float) -> bytes:
        assert not self.paused
        if not self.queue:
            return self._wait_forever(deadline)
        item = self.queue.popleft()
        if isinstance(item, Think):
            if self.clock.t + item.ms / 1000 > deadline:
                self.clock.t = deadline
                raise Timeout("deadline")
            self.clock.t += item.ms / 1000
            self.write_stderr(item.stderr)
            item = item.line
        if isinstance(item, Exit):
            self.clock.t += item.ms / 1000
            self.returncode = item.code
            self.write_stderr(item.stderr)
            raise Closed("end of output")
        if isinstance(item, Hang):
            return self._wait_forever(deadline)
        if isinstance(item, Endless):
            raise LineTooLong(f"more than {self.line_limit} bytes without a newline")
        if isinstance(item, dict):
            item = json.dumps(item).encode()
        if isinstance(item, str):
            item = item.encode()
        if isinstance(item, Violation):
            self.the_violation = item
            self.returncode = -9
            raise Closed("end of output")
        return item

    def _wait_forever(self, deadline: float) -> bytes:
        self.clock.t = max(self.clock.t, deadline)
        raise Timeout("deadline")

    def unsolicited(self) -> bytes:
        out, self.extra_output = self.extra_output, b""
        return out

    def drain_stderr(self, deadline: float | None = None) -> None:
        pass

    def close_input(self) -> None:
        self.input_closed = True

    def wait_exit(self, deadline: float) -> int | None:
        if self.returncode is None and self.input_closed and not self.ignores_end:
            self.returncode = 0
        if self.returncode is None:
            self.clock.t = max(self.clock.t, deadline)
        return self.returncode

    def poll(self) -> int | None:
        return self.returncode

    def pause(self) -> None:
        assert not self.paused
        self.paused = True
        self.pauses += 1

    def resume(self) -> None:
        assert self.paused
        self.paused = False

    def cpu_seconds(self) -> float:
        return 0.0

    def setup_failure(self) -> str | None:
        return None

    def violation(self) -> Any:
        return self.the_violation

    def kill(self) -> None:
        self.killed = True
        if self.returncode is None:
            self.returncode = -9

    # helpers for tests
    def write_stderr(self, data: bytes) -> None:
        """The bot writes ``data`` to its standard error (the tail keeps its last 4 KiB)."""
        self.stderr += data
        self.stderr_bytes += len(data)

    def requests(self) -> list[protocol.Request]:
        return [m for m in self.received if isinstance(m, protocol.Request)]


class Cancel(Exception):
    pass


__all__ = [
    "Cancelled",
    "Endless",
    "Exit",
    "FakeBot",
    "FakeClock",
    "Hang",
    "Think",
    "Violation",
    "first_legal",
]
