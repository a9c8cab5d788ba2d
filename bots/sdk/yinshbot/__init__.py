"""yinshbot: write a YINSH bot as one function.

A bot reads the referee's messages on standard input and answers on standard output (the
protocol of docs/protocol.md). This module does all of that; a bot author writes ``choose``,
which gets a :class:`Request` and returns one of ``request.actions``::

    import random
    import yinshbot

    def choose(request):
        return random.choice(request.actions)

    if __name__ == "__main__":
        yinshbot.run(choose)

``choose`` may also return ``(action, info)`` where ``info`` is a small dict (an evaluation, a
search depth, a comment) that the referee keeps in the game's transcript. An exception in
``choose`` is printed to standard error (the referee keeps its tail) and ends the bot.

``request.state()`` gives the position as an :class:`engine.State` (the rules library), replayed
from the game's history, for bots that search. The referee makes ``engine`` and ``yinshbot``
importable inside the sandbox.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

__all__ = ["Clock", "Hello", "Request", "main", "read_manifest", "run"]
__version__ = "1.0"

PROTOCOL = 1


@dataclass(frozen=True)
class Clock:
    """Milliseconds left on the bot's clock and on its opponent's, when the request was sent."""

    you_ms: int
    opponent_ms: int


@dataclass(frozen=True)
class Hello:
    """The game, as announced by the referee's ``hello``."""

    variant: str
    color: str
    initial_ms: int
    increment_ms: int
    seed: int


@dataclass
class Request:
    """What the referee asks: choose one of ``actions``.

    Attributes:
        actions: the legal action tokens (``e5``, ``a2-h9``, ``xc2-c6``, ``xa5``, ``pass``).
        history: every action of the game so far, in order.
        position: the position as JSON data (``engine.State.to_json()``).
        clock: time left, see :class:`Clock`.
        color: ``"white"`` or ``"black"`` (this bot's colour).
        variant: ``yinsh``, ``blitz``, ``yangsh`` or ``yangsh7``.
        seed: the game's seed (use it to make a bot reproducible).
        increment_ms: what the clock gains per turn.
    """

    actions: list[str]
    history: list[str]
    position: dict[str, Any]
    clock: Clock
    color: str
    variant: str
    seed: int = 0
    increment_ms: int = 0
    _cache: _StateCache | None = field(default=None, repr=False, compare=False)

    def state(self) -> Any:
        """The position as an ``engine.State`` (a fresh copy each call), history included."""
        cache = self._cache or _StateCache(self.variant)
        return cache.state(self.history)


class _StateCache:
    """Replays a growing history incrementally (one request after another in one game)."""

    def __init__(self, variant: str) -> None:
        import engine

        self._state = engine.State(variant)

    def state(self, history: list[str]) -> Any:
        s = self._state
        played = [str(a) for a in s.history]
        if played != history[: len(played)]:
            import engine

            s = self._state = engine.State(s.variant)
            played = []
        for token in history[len(played) :]:
            s.play(token)
        return s.copy()


def read_manifest(folder: str | Path = ".") -> tuple[str, str]:
    """The ``name`` and ``version`` of the bot.toml in ``folder`` (empty strings if absent)."""
    try:
        import tomllib

        data = tomllib.loads((Path(folder) / "bot.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "", ""
    return str(data.get("name", "")), str(data.get("version", ""))


Choose = Callable[[Request], Any]


def run(
    choose: Choose,
    *,
    name: str | None = None,
    version: str | None = None,
    on_start: Callable[[Hello], None] | None = None,
    on_end: Callable[[str, str], None] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
) -> int:
    """Play games: answer ``hello``, then each ``request`` with ``choose(request)``.

    ``name`` and ``version`` default to those of ./bot.toml. ``on_start(hello)`` is called
    before ``ready``, ``on_end(result, reason)`` when the game is over. Returns the exit status
    (0 after ``end`` or end of input, 1 after an error, which is printed to standard error).
    """
    inp = stdin if stdin is not None else sys.stdin.buffer
    out = stdout if stdout is not None else sys.stdout
    if name is None or version is None:
        manifest_name, manifest_version = read_manifest()
        name = name if name is not None else (manifest_name or Path(sys.argv[0]).stem)
        version = version if version is not None else manifest_version
    hello: Hello | None = None
    cache: _StateCache | None = None
    try:
        for raw in inp:
            if not raw.strip():
                continue
            message = json.loads(raw)
            kind = message.get("type")
            if kind == "hello":
                if message.get("protocol") != PROTOCOL:
                    print(
                        f"yinshbot: protocol {message.get('protocol')} is not {PROTOCOL}",
                        file=sys.stderr,
                    )
                time = message.get("time", {})
                hello = Hello(
                    variant=message["variant"],
                    color=message["color"],
                    initial_ms=int(time.get("initial_ms", 0)),
                    increment_ms=int(time.get("increment_ms", 0)),
                    seed=int(message.get("seed", 0)),
                )
                cache = None
                if on_start is not None:
                    on_start(hello)
                _send(out, {"type": "ready", "name": name, "version": version})
            elif kind == "request":
                if hello is None:
                    raise ValueError("a request before hello")
                clock = message.get("clock", {})
                request = Request(
                    actions=message["actions"],
                    history=message["history"],
                    position=message.get("position", {}),
                    clock=Clock(int(clock.get("you_ms", 0)), int(clock.get("opponent_ms", 0))),
                    color=hello.color,
                    variant=hello.variant,
                    seed=hello.seed,
                    increment_ms=hello.increment_ms,
                )
                if cache is None:
                    cache = _StateCache(hello.variant)
                request._cache = cache
                answer = choose(request)
                info = None
                if isinstance(answer, tuple):
                    answer, info = answer
                reply: dict[str, Any] = {"type": "action", "action": str(answer)}
                if info:
                    reply["info"] = info
                _send(out, reply)
            elif kind == "end":
                if on_end is not None:
                    on_end(message.get("result", ""), message.get("reason", ""))
                return 0
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    except Exception:
        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        return 1
    return 0


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
    out.flush()


def main(choose: Choose, **kwargs: Any) -> None:
    """``run(choose)`` then exit with its status: the usual last line of a bot's main.py."""
    sys.exit(run(choose, **kwargs))
