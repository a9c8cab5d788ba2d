"""Whose eyes a game's logs are for: the redaction of transcripts and failure texts.

A bot's standard error, its ``info`` and the details of its failure (exit code, sandbox
violation, the full failure text) belong to its owner (and the operators); a game's result and
what happened (crashed, ran out of time, played an illegal move) are public. Server paths
(the bot store, the build cache, the arena's own folders) are shown to nobody.

Plain Python (no Django): the one place that knows which parts of a transcript
(docs/protocol.md, "Transcript") are private. The Django side (who may see which colour, the
server's folders) is :mod:`arena.games.privacy`, which every page, API answer and archive goes
through::

    >>> t = {"players": {"white": {"path": "/srv/var/bot-cache/ab/bot", "stderr_tail": "oops"},
    ...                  "black": {"path": "/srv/var/bots/cd", "stderr_tail": "fine"}},
    ...      "moves": [{"color": "white", "action": "e3", "info": {"eval": 1}, "stderr": "hm\\n"}],
    ...      "reason": "white exited at ply 1 (exit code 1); stderr: oops", "fault": "white"}
    >>> r = redact(t, {"black"}, roots=["/srv/var"])
    >>> r["players"]["white"], r["players"]["black"]
    ({'path': '<path>'}, {'path': '<path>', 'stderr_tail': 'fine'})
    >>> r["moves"], r["reason"]
    ([{'color': 'white', 'action': 'e3'}], 'white exited at ply 1 (exit code 1)')
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from arena.referee.jsontypes import JSON, JSONObject
from arena.referee.reasons import STDERR_MARK, without_stderr

__all__ = [
    "COLOURS",
    "PATH_MARK",
    "PRIVATE_MOVE_KEYS",
    "PRIVATE_PLAYER_KEYS",
    "STDERR_MARK",
    "PlayerLog",
    "player_logs",
    "public_text",
    "redact",
    "strip_json_paths",
    "strip_paths",
]

COLOURS = ("white", "black")
#: What a server path becomes.
PATH_MARK = "<path>"
#: A player's keys in a transcript that only the owner of that colour may see: its standard
#: error, how its process ended (exit code, kills, sandbox violation, the full failure text),
#: its dropped ``info``, and its command and build (its source's business).
PRIVATE_PLAYER_KEYS = frozenset(
    {
        "stderr_tail",
        "stderr_bytes",
        "exit",
        "killed",
        "killed_after_grace",
        "violation",
        "failure",
        "info_dropped",
        "command",
        "build",
    }
)
#: A move entry's keys that only the owner of the colour that played it may see.
PRIVATE_MOVE_KEYS = frozenset({"info", "info_dropped", "stderr", "stderr_bytes"})
#: A player's keys that hold a server path, for everybody.
_PATH_KEYS = ("path",)

#: An absolute path in a message: a slash not inside a word, a number (1/2), a relative path
#: or a closing tag (``</script>``).
_ANY_PATH = re.compile(r"(?<![\w.~/<-])/[^\s'\"`:;,()\[\]{}<>|]+")


def _root_pattern(roots: Iterable[str]) -> re.Pattern[str] | None:
    """One pattern for every path under one of ``roots`` (longest first, "/" skipped). A root
    is a whole folder name, except one that ends in ``-``: a prefix of names
    (``/tmp/yinsh-bot-`` for ``/tmp/yinsh-bot-x1``)."""
    cleaned = sorted(
        {r.rstrip("/") for r in roots if r and r.startswith("/") and r.rstrip("/")},
        key=len,
        reverse=True,
    )
    if not cleaned:
        return None
    alternatives = "|".join(re.escape(r) + (r"[\w.-]*" if r.endswith("-") else "") for r in cleaned)
    return re.compile(rf"(?:{alternatives})(?![\w.-])[^\s'\"`:;,()\[\]{{}}<>|]*")


def strip_paths(text: str, roots: Iterable[str] = (), *, every: bool = False) -> str:
    """``text`` with every path under one of ``roots`` (the server's folders) replaced by
    :data:`PATH_MARK`; with ``every``, every absolute path at all (a public message, where even
    a path inside the sandbox says too much).

    >>> strip_paths("cannot read /srv/var/bots/ab12: gone", ["/srv/var"])
    'cannot read <path>: gone'
    >>> strip_paths("File /bot/main.py, line 3", ["/srv/var"])
    'File /bot/main.py, line 3'
    >>> strip_paths("File /bot/main.py, line 3 (1/2-1/2)", every=True)
    'File <path>, line 3 (1/2-1/2)'
    """
    pattern = _root_pattern(roots)
    if pattern is not None:
        text = pattern.sub(PATH_MARK, text)
    if every:
        text = _ANY_PATH.sub(PATH_MARK, text)
    return text


def public_text(text: str, roots: Iterable[str] = ()) -> str:
    """The public words of a failure text (a match's or a version's reason): what happened,
    without the bot's standard error (:data:`STDERR_MARK` and all after it) or any path.

    >>> public_text("black exited at ply 8 (exit code 3); stderr: Error at /bot/x.py")
    'black exited at ply 8 (exit code 3)'
    >>> public_text("the build failed: cannot open /srv/var/builds/ab/out")
    'the build failed: cannot open <path>'
    """
    return strip_paths(without_stderr(text), roots, every=True)


def strip_json_paths(value: JSON, roots: Iterable[str]) -> JSON:
    """A copy of JSON data (a bot's ``info``) with every path under one of ``roots`` taken
    out of its strings, keys included::

        >>> strip_json_paths({"folder": "/srv/var/bots/ab12", "depth": 3}, ["/srv/var"])
        {'folder': '<path>', 'depth': 3}
    """
    return _strings(value, _root_pattern(roots))


def _strings(value: JSON, roots: re.Pattern[str] | None) -> JSON:
    """A copy of JSON data with the server's paths taken out of every string, keys included."""
    if isinstance(value, str):
        return roots.sub(PATH_MARK, value) if roots is not None else value
    if isinstance(value, Mapping):
        return {str(_strings(k, roots)): _strings(v, roots) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(v, roots) for v in value]
    return value


def _failing(transcript: Mapping[str, JSON]) -> set[str]:
    """The colours whose failure the top-level reason may quote."""
    fault = transcript.get("fault")
    if fault in COLOURS:
        return {str(fault)}
    return set(COLOURS)  # both failed (or an old transcript): the reason may quote both


def redact(transcript: JSON, visible: Collection[str], roots: Iterable[str] = ()) -> JSON:
    """A copy of a game's ``transcript`` as a viewer who may see the logs of the ``visible``
    colours (``"white"``, ``"black"``) sees it.

    * each other colour's player loses :data:`PRIVATE_PLAYER_KEYS` (stderr, exit, violation,
      failure, command...) and its move entries lose :data:`PRIVATE_MOVE_KEYS` (``info``);
    * the top-level ``reason`` becomes :func:`public_text` unless the viewer sees every colour
      it may quote (the one at fault, or both);
    * every player's ``path`` becomes :data:`PATH_MARK`, and every string anywhere loses the
      paths under ``roots`` (the server's folders), whoever looks.

    Anything else (a list of moves, an unknown key, a malformed transcript) is copied with the
    paths taken out; this never fails. The argument is not changed.
    """
    pattern = _root_pattern(roots)
    if not isinstance(transcript, Mapping):
        return _strings(transcript, pattern)
    shown = set(visible)
    out: JSONObject = {}
    for key, value in transcript.items():
        if key == "players" and isinstance(value, Mapping):
            out[key] = {
                colour: _player(colour, player, colour in shown) for colour, player in value.items()
            }
        elif key == "moves" and isinstance(value, list):
            out[key] = [_move(entry, shown) for entry in value]
        elif key == "reason" and isinstance(value, str) and not _failing(transcript) <= shown:
            public = transcript.get("public_reason")  # absent from an older transcript
            out[key] = public_text(public if isinstance(public, str) else value)
        else:
            out[key] = value
    return _strings(out, pattern)


def _player(colour: str, player: JSON, visible: bool) -> JSON:
    if not isinstance(player, Mapping):
        return player
    kept = {k: v for k, v in player.items() if visible or k not in PRIVATE_PLAYER_KEYS}
    for key in _PATH_KEYS:
        if key in kept:
            kept[key] = PATH_MARK
    return kept


def _move(entry: JSON, shown: set[str]) -> JSON:
    if not isinstance(entry, Mapping) or entry.get("color") in shown:
        return entry
    return {k: v for k, v in entry.items() if k not in PRIVATE_MOVE_KEYS}


# ----------------------------------------------------------------------------- owners' view


@dataclass
class PlayerLog:
    """What a bot's owner reads of one colour's game on the match page."""

    colour: str
    name: str
    stderr: str
    stderr_bytes: int
    #: How its process ended, in words (``exit code 0``, ``killed by signal 9``...).
    ending: list[str] = field(default_factory=list)
    #: The full text of its failure, when it lost by one.
    failure: str = ""
    #: One row per action it was asked for: (ply, action, think ms, info as text to read:
    #: see :func:`info_text`).
    moves: list[tuple[int, str, float | None, str]] = field(default_factory=list)


def info_text(info: JSON) -> str:
    """A bot's ``info`` as a person reads it: keys and values, not JSON::

    >>> info_text({"depth": 3, "pv": ["e3", "a5"], "eval": {"w": 0.5}})
    'depth: 3 · pv: e3 a5 · eval: (w: 0.5)'
    >>> info_text("thinking hard")
    'thinking hard'
    """
    return "" if info is None else _info_value(info)


def _info_value(value: JSON, depth: int = 0) -> str:
    """``value`` in words: the top mapping's pairs apart with ``·``, a list's items with
    spaces, whatever is nested deeper in parentheses."""
    if isinstance(value, Mapping):
        pairs = [f"{k}: {_info_value(v, depth + 1)}" for k, v in value.items()]
        return " · ".join(pairs) if depth == 0 else f"({', '.join(pairs)})"
    if isinstance(value, list):
        items = " ".join(_info_value(v, depth + 1) for v in value)
        return items if depth <= 1 else f"({items})"
    if isinstance(value, str):
        return value
    return json.dumps(value)  # a number, true, false or null, as JSON writes it


def player_logs(transcript: JSON, visible: Collection[str]) -> list[PlayerLog]:
    """The logs of the ``visible`` colours, read from a transcript already passed through
    :func:`redact` for the same viewer (so nothing here is more than the viewer may see)."""
    if not isinstance(transcript, Mapping):
        return []
    players = transcript.get("players")
    moves = transcript.get("moves")
    fault = transcript.get("fault")
    logs: list[PlayerLog] = []
    for colour in COLOURS:
        if colour not in visible or not isinstance(players, Mapping):
            continue
        p = players.get(colour)
        if not isinstance(p, Mapping):
            continue
        ending = []
        for key, words in (
            ("exit", "{}"),
            ("killed", "killed {}"),
            ("violation", "stopped by the sandbox: {}"),
        ):
            if isinstance(p.get(key), str) and p[key]:
                ending.append(words.format(p[key]))
        if p.get("killed_after_grace"):
            ending.append("did not exit after end and was killed")
        if p.get("info_dropped"):
            ending.append(f"{p['info_dropped']} info objects over the size limit were dropped")
        failure = p.get("failure")
        if not isinstance(failure, str) and fault == colour:
            failure = transcript.get("reason")
        rows: list[tuple[int, str, float | None, str]] = []
        if isinstance(moves, list):
            for ply, m in enumerate(moves, 1):
                if not isinstance(m, Mapping) or m.get("color") != colour or "ms" not in m:
                    continue
                info = m.get("info")
                text = info_text(info)
                if "info_dropped" in m:
                    text = f"(dropped: {m['info_dropped']} bytes)"
                ms = m.get("ms")
                rows.append(
                    (
                        ply,
                        str(m.get("action", "")),
                        float(ms) if isinstance(ms, int | float) else None,
                        text,
                    )
                )
        stderr = p.get("stderr_tail")
        size = p.get("stderr_bytes")
        logs.append(
            PlayerLog(
                colour=colour,
                name=str(p.get("name", "")),
                stderr=stderr if isinstance(stderr, str) else "",
                stderr_bytes=size if isinstance(size, int) else 0,
                ending=ending,
                failure=failure if isinstance(failure, str) else "",
                moves=rows,
            )
        )
    return logs
