"""The bot protocol, version 1: JSON messages, one per line (docs/protocol.md).

This module is a pure codec: it turns messages into lines and lines into messages, and knows
nothing about processes or clocks. Reading is strict, because the referee never trusts a bot:
anything that is not exactly a message it expects raises :class:`ProtocolError`, whose text is
the reason recorded when the bot loses::

    >>> encode(Ready("random", "1.0"))
    b'{"type":"ready","name":"random","version":"1.0"}\\n'
    >>> decode_bot_message(b'{"type": "action", "action": "e5"}\\n', expect=ActionReply)
    ActionReply(action='e5', info=None)
    >>> decode_bot_message(b'{"type": "resign"}', expect=ActionReply)
    Resign(info=None)
    >>> decode_bot_message(b'{"type": "action"}', expect=ActionReply)
    Traceback (most recent call last):
    ...
    arena.referee.protocol.ProtocolError: the action message lacks "action"

Requests are by far the most frequent message and carry the whole history, so
:class:`RequestEncoder` keeps the history already encoded and appends to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_NAME_CHARS",
    "PROTOCOL_VERSION",
    "ActionReply",
    "End",
    "Hello",
    "Message",
    "ProtocolError",
    "Ready",
    "Request",
    "RequestEncoder",
    "Resign",
    "decode_bot_message",
    "decode_referee_message",
    "encode",
]

#: The protocol version this referee speaks (sent in ``hello``).
PROTOCOL_VERSION = 1
#: Longest bot name or version accepted in ``ready``, in characters.
MAX_NAME_CHARS = 100

_COMPACT = (",", ":")


class ProtocolError(ValueError):
    """A line that is not the message expected: bad UTF-8, bad JSON, a wrong type or field."""


@dataclass(frozen=True)
class Hello:
    """Referee -> bot, first: the game about to be played."""

    variant: str
    color: str
    initial_ms: int
    increment_ms: int
    seed: int = 0
    protocol: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class Ready:
    """Bot -> referee, the answer to ``hello``."""

    name: str
    version: str = ""


@dataclass(frozen=True)
class Request:
    """Referee -> bot: act now. ``actions`` are the legal action tokens."""

    actions: tuple[str, ...]
    history: tuple[str, ...]
    position: dict[str, Any]
    you_ms: int
    opponent_ms: int


@dataclass(frozen=True)
class ActionReply:
    """Bot -> referee, the answer to ``request``; ``info`` is free-form (evaluation, depth...)."""

    action: str
    info: dict[str, Any] | None = None


@dataclass(frozen=True)
class Resign:
    """Bot -> referee, the other answer to ``request``: the bot gives up, its opponent wins.
    ``info`` is free-form, as with an action."""

    info: dict[str, Any] | None = None


@dataclass(frozen=True)
class End:
    """Referee -> bot, last: the result (``white``, ``black`` or ``draw``) and why."""

    result: str
    reason: str


Message = Hello | Ready | Request | ActionReply | Resign | End


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=_COMPACT, ensure_ascii=False)


def encode(message: Message) -> bytes:
    """One message as one line of compact JSON, newline included, in UTF-8."""
    if isinstance(message, Hello):
        data: dict[str, Any] = {
            "type": "hello",
            "protocol": message.protocol,
            "variant": message.variant,
            "color": message.color,
            "time": {"initial_ms": message.initial_ms, "increment_ms": message.increment_ms},
            "seed": message.seed,
        }
    elif isinstance(message, Ready):
        data = {"type": "ready", "name": message.name, "version": message.version}
    elif isinstance(message, Request):
        data = {
            "type": "request",
            "actions": list(message.actions),
            "history": list(message.history),
            "position": message.position,
            "clock": {"you_ms": message.you_ms, "opponent_ms": message.opponent_ms},
        }
    elif isinstance(message, ActionReply):
        data = {"type": "action", "action": message.action}
        if message.info is not None:
            data["info"] = message.info
    elif isinstance(message, Resign):
        data = {"type": "resign"}
        if message.info is not None:
            data["info"] = message.info
    elif isinstance(message, End):
        data = {"type": "end", "result": message.result, "reason": message.reason}
    else:
        raise TypeError(f"not a protocol message: {message!r}")
    return (_dumps(data) + "\n").encode()


class RequestEncoder:
    """Encodes the requests of one game, appending each action to an already encoded history.

    The result is byte for byte what :func:`encode` gives for the same request::

        >>> enc = RequestEncoder()
        >>> enc.append("e5")
        >>> line = enc.encode(["a2", "a3"], {"pool": 51}, 1000, 2000)
        >>> line == encode(Request(("a2", "a3"), ("e5",), {"pool": 51}, 1000, 2000))
        True
    """

    def __init__(self, history: Sequence[str] = ()) -> None:
        self._history = ""
        for token in history:
            self.append(token)

    def append(self, token: str) -> None:
        """Add one action token to the history."""
        item = _dumps(token)
        self._history = f"{self._history},{item}" if self._history else item

    def encode(
        self, actions: Sequence[str], position: dict[str, Any], you_ms: int, opponent_ms: int
    ) -> bytes:
        """The ``request`` line for these legal actions, position and clocks."""
        return (
            f'{{"type":"request","actions":{_dumps(list(actions))},'
            f'"history":[{self._history}],"position":{_dumps(position)},'
            f'"clock":{{"you_ms":{int(you_ms)},"opponent_ms":{int(opponent_ms)}}}}}\n'
        ).encode()


# ------------------------------------------------------------------------------- decoding


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _load(line: bytes | str) -> dict[str, Any]:
    if isinstance(line, bytes):
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProtocolError(
                f"the line is not valid UTF-8 (byte {e.start}: {line[e.start : e.start + 1]!r})"
            ) from None
    else:
        text = line
    text = text.strip()
    if not text:
        raise ProtocolError("an empty line")
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as e:
        raise ProtocolError(f"the line is not JSON ({_short_error(e)}): {_clip(text)}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"expected a JSON object, got {_json_kind(data)}: {_clip(text)}")
    kind = data.get("type")
    if not isinstance(kind, str):
        if "type" not in data:
            raise ProtocolError(f'the message has no "type": {_clip(text)}')
        raise ProtocolError(f'"type" must be a string, got {_json_kind(kind)}')
    return data


def _short_error(e: BaseException) -> str:
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return str(e).split(":")[0]


def _clip(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _field(data: dict[str, Any], kind: str, name: str, types: type | tuple[type, ...]) -> Any:
    if name not in data:
        raise ProtocolError(f'the {kind} message lacks "{name}"')
    value = data[name]
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
        raise ProtocolError(f'"{name}" of the {kind} message is {_json_kind(value)}')
    return value


def _a(word: str) -> str:
    return f"an {word}" if word[:1] in "aeiou" else f"a {word}"


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def _name(data: dict[str, Any], field: str, *, required: bool) -> str:
    if not required and field not in data:
        return ""
    value: str = _field(data, "ready", field, str)
    if required and not value.strip():
        raise ProtocolError(f'"{field}" of the ready message is empty')
    if len(value) > MAX_NAME_CHARS or not value.isprintable():
        raise ProtocolError(
            f'"{field}" of the ready message must be printable and at most {MAX_NAME_CHARS} '
            "characters"
        )
    return value


_BOT_TYPES = {"ready": Ready, "action": ActionReply, "resign": Resign}
_BOT_NAMES = {Ready: "ready", ActionReply: "action"}


def decode_bot_message(
    line: bytes | str, *, expect: type[Ready] | type[ActionReply]
) -> Ready | ActionReply | Resign:
    """Read a bot's line, which must be a message of type ``expect``. Raises ProtocolError.

    A :class:`Resign` answers a request as an :class:`ActionReply` does: it is accepted where
    an action is expected. Unknown extra fields are ignored (later protocol versions may add
    some).
    """
    data = _load(line)
    kind = data["type"]
    wanted = _BOT_NAMES[expect]
    if kind != wanted and not (kind == "resign" and expect is ActionReply):
        if kind in _BOT_TYPES or kind in ("hello", "request", "end"):
            raise ProtocolError(f"expected {_a(wanted)} message, got {_a(kind)} message")
        raise ProtocolError(f"unknown message type {kind!r} (expected {wanted!r})")
    if expect is Ready:
        return Ready(_name(data, "name", required=True), _name(data, "version", required=False))
    action = _field(data, "action", "action", str) if kind == "action" else None
    info = data.get("info")
    if info is not None and not isinstance(info, dict):
        raise ProtocolError(
            f'"info" of the {kind} message must be an object, not {_json_kind(info)}'
        )
    return Resign(info) if action is None else ActionReply(action, info)


def decode_referee_message(line: bytes | str) -> Hello | Request | End:
    """Read a referee's line (what a bot does; used by tests and tools). Raises ProtocolError."""
    data = _load(line)
    kind = data["type"]
    if kind == "hello":
        time = _field(data, "hello", "time", dict)
        return Hello(
            variant=_field(data, "hello", "variant", str),
            color=_field(data, "hello", "color", str),
            initial_ms=_field(time, "hello", "initial_ms", int),
            increment_ms=_field(time, "hello", "increment_ms", int),
            seed=_field(data, "hello", "seed", int),
            protocol=_field(data, "hello", "protocol", int),
        )
    if kind == "request":
        clock = _field(data, "request", "clock", dict)
        return Request(
            actions=tuple(_field(data, "request", "actions", list)),
            history=tuple(_field(data, "request", "history", list)),
            position=_field(data, "request", "position", dict),
            you_ms=_field(clock, "request", "you_ms", int),
            opponent_ms=_field(clock, "request", "opponent_ms", int),
        )
    if kind == "end":
        return End(_field(data, "end", "result", str), _field(data, "end", "reason", str))
    raise ProtocolError(f"unknown message type {kind!r}")
