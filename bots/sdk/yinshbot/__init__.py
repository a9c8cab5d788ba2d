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
search depth, a comment) that the referee keeps in the game's transcript. To resign (the game
ends at once, the opponent winning), it returns :data:`RESIGN` instead of an action, or
``(RESIGN, info)``. An exception in ``choose`` is printed to standard error (the referee keeps
its tail) and ends the bot.

``request.state()`` gives the position as an :class:`engine.State` (the rules library), replayed
from the game's history, for bots that search. The referee makes ``engine`` and ``yinshbot``
importable inside the sandbox.
"""

from __future__ import annotations

# Only what answering ``hello`` needs is imported here: a bot's start-up is CPU time on the
# arena's machines, and dataclasses, typing, pathlib, tomllib or traceback would cost it more
# than the rest of the SDK (``./dev bench startup`` measures it). The engine is imported on the
# first ``Request.state()``; tomllib only for a manifest that is not plain; traceback on an error.
import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import IO, Any

    Choose = Callable[["Request"], Any]

__all__ = ["RESIGN", "Clock", "Hello", "Request", "main", "read_manifest", "run"]
__version__ = "1.0"

PROTOCOL = 1


class _Resign:
    """The type of :data:`RESIGN` (one value only)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "yinshbot.RESIGN"


#: What ``choose`` returns to resign rather than play: ``return yinshbot.RESIGN``.
RESIGN = _Resign()


class _Record:
    """Equality field by field and a ``repr`` that rebuilds the value, as a dataclass has.

    The SDK's value classes are written out rather than made with ``dataclasses``, whose import
    (``inspect``, ``ast``, ``dis``...) alone costs a bot more CPU at start-up than the rest.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({fields})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]  # same class


class _Frozen(_Record):
    """A :class:`_Record` whose fields cannot change, hashable (a frozen dataclass)."""

    __slots__ = ()

    def __init__(self, *values: Any) -> None:
        for f, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, f, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r} of a {type(self).__name__}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r} of a {type(self).__name__}")

    def __hash__(self) -> int:
        return hash(self._values())


class Clock(_Frozen):
    """Milliseconds left on the bot's clock and on its opponent's, when the request was sent."""

    __slots__ = ("opponent_ms", "you_ms")
    _fields = ("you_ms", "opponent_ms")
    you_ms: int
    opponent_ms: int

    def __init__(self, you_ms: int, opponent_ms: int) -> None:
        super().__init__(you_ms, opponent_ms)


class Hello(_Frozen):
    """The game, as announced by the referee's ``hello``."""

    __slots__ = ("color", "increment_ms", "initial_ms", "seed", "variant")
    _fields = ("variant", "color", "initial_ms", "increment_ms", "seed")
    variant: str
    color: str
    initial_ms: int
    increment_ms: int
    seed: int

    def __init__(
        self, variant: str, color: str, initial_ms: int, increment_ms: int, seed: int
    ) -> None:
        super().__init__(variant, color, initial_ms, increment_ms, seed)


class Request(_Record):
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

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq is
    _fields = (
        "actions",
        "history",
        "position",
        "clock",
        "color",
        "variant",
        "seed",
        "increment_ms",
    )

    def __init__(
        self,
        actions: list[str],
        history: list[str],
        position: dict[str, Any],
        clock: Clock,
        color: str,
        variant: str,
        seed: int = 0,
        increment_ms: int = 0,
        _cache: _StateCache | None = None,
    ) -> None:
        self.actions = actions
        self.history = history
        self.position = position
        self.clock = clock
        self.color = color
        self.variant = variant
        self.seed = seed
        self.increment_ms = increment_ms
        self._cache = _cache

    def state(self) -> Any:
        """The position as an ``engine.State`` (a fresh copy each call), history included."""
        cache = self._cache or _StateCache(self.variant)
        return cache.state(self.history)


class _StateCache:
    """Replays a growing history incrementally (one request after another in one game).

    The engine is imported, and the first position made, when a position is first asked for.
    """

    def __init__(self, variant: str) -> None:
        self._variant = variant
        self._state: Any = None

    def state(self, history: list[str]) -> Any:
        s = self._state
        played = [] if s is None else [str(a) for a in s.history]
        if s is None or played != history[: len(played)]:
            import engine

            s = self._state = engine.State(self._variant)
            played = []
        for token in history[len(played) :]:
            s.play(token)
        return s.copy()


def read_manifest(folder: str | os.PathLike[str] = ".") -> tuple[str, str]:
    """The ``name`` and ``version`` of the bot.toml in ``folder`` (empty strings if absent)."""
    try:
        with open(os.path.join(folder, "bot.toml"), encoding="utf-8") as f:
            text = f.read()
        data = _plain_manifest(text)
        if data is None:
            import tomllib

            data = tomllib.loads(text)
    except (OSError, ValueError):
        return "", ""
    return str(data.get("name", "")), str(data.get("version", ""))


_BARE_KEY = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _plain_manifest(text: str) -> dict[str, str] | None:
    r"""``name`` and ``version`` read without ``tomllib`` when that is safe, else None.

    Safe: both are bare keys whose values are one-line strings without escapes, before the
    first table, and no multi-line string could hide a line. Anything else (a missing key, a
    quoted or dotted key, a number, an escape) is left to ``tomllib``::

        >>> _plain_manifest('name = "b"  # the name\nversion = \'1.0\'\n[x]\nname = "y"\n')
        {'name': 'b', 'version': '1.0'}
        >>> _plain_manifest('name = "b"\nversion = 1.0\n') is None
        True
    """
    if '"""' in text or "'''" in text:
        return None
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            break  # a table: what follows is not at the top level
        key, equals, value = line.partition("=")
        key = key.strip()
        if not equals or line.startswith("#"):
            continue
        if not _BARE_KEY.issuperset(key):
            return None  # a quoted or dotted key could be one of ours
        if key not in ("name", "version"):
            continue
        value = value.strip()
        quote = value[:1]
        close = value.find(quote, 1) if quote in ('"', "'") else -1
        string, rest = value[1:close], value[close + 1 :].strip()
        if close < 0 or "\\" in string or key in found or (rest and not rest.startswith("#")):
            return None
        found[key] = string
    return found if len(found) == 2 else None


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
        name = name if name is not None else (manifest_name or _script_name())
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
                reply: dict[str, Any] = (
                    {"type": "resign"}
                    if answer is RESIGN
                    else {"type": "action", "action": str(answer)}
                )
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
        import traceback

        traceback.print_exc(file=sys.stderr)
        sys.stderr.flush()
        return 1
    return 0


def _script_name() -> str:
    """The name of the running script without its suffix (``main`` for main.py)."""
    return os.path.splitext(os.path.basename(sys.argv[0].rstrip(os.sep)))[0]


def _send(out: IO[str], message: dict[str, Any]) -> None:
    out.write(json.dumps(message, separators=(",", ":")) + "\n")
    out.flush()


def main(choose: Choose, **kwargs: Any) -> None:
    """``run(choose)`` then exit with its status: the usual last line of a bot's main.py."""
    sys.exit(run(choose, **kwargs))
