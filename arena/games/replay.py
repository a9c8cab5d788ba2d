"""The data of the board replay widget: a game record turned into frames, one per action.

Plain Python (no Django), so that views, management commands and tests share it. The widget
(``arena/static/arena/board.js``) draws whatever board the data describes, so the geometry, the
notation and the positions all come from the engine, computed here once::

    >>> import engine
    >>> data = replay_frames(engine.Record.parse("1.e3 2.a5"))
    >>> data["board"]["kind"], len(data["board"]["points"]), len(data["frames"])
    ('hex', 85, 2)
    >>> f = data["frames"][1]
    >>> f["n"], f["turn"], f["by"], f["position"]["rings"]
    (2, '2.a5', 'black', {'white': ['e3'], 'black': ['a5']})

The format is documented in docs/replay.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterator, Mapping
from typing import NotRequired, TypedDict

import engine
from arena.referee.jsontypes import JSON, JSONObject
from arena.referee.redaction import info_text
from engine import Action, Board, Kind, Record, State

#: Digits kept in screen coordinates (neighbouring points are 1 apart).
_DIGITS = 4
#: Room around the outermost points, in the same unit, for the rings and the labels.
_MARGIN = 1.0
_SQRT3_2 = math.sqrt(3) / 2


# --------------------------------------------------------------------------- the data
# The widget's JSON data, as docs/replay.md describes it.


class Point(TypedDict):
    name: str
    x: float
    y: float


class Label(TypedDict):
    text: str
    x: float
    y: float


class Layout(TypedDict):
    kind: str
    name: str
    width: float
    height: float
    points: list[Point]
    #: One segment ``[x1, y1, x2, y2]`` per pair of neighbouring points on a line.
    lines: list[list[float]]
    labels: list[Label]


class Changes(TypedDict):
    flipped: list[str]
    removed: list[str]
    moved: list[str] | None


class Frame(Changes):
    n: int
    turn: str
    turn_index: int
    action: str
    kind: str
    by: str
    position: JSONObject
    think_ms: NotRequired[int]
    info: NotRequired[str]
    #: What the bot wrote to its standard error on this action (its owner's), and how many
    #: bytes that was when only its end is here.
    stderr: NotRequired[str]
    stderr_bytes: NotRequired[int]


class Turn(TypedDict):
    label: str
    by: str
    first: int
    last: int


class GameData(TypedDict):
    """What the replay widget knows of a game before its turns and frames (the live feed
    sends it alone)."""

    variant: str
    title: str
    rings: int
    rows_to_win: int
    board: Layout
    white: str
    black: str
    initial: JSONObject


class Replay(GameData):
    result: str | None
    score: str
    termination: str | None
    headers: dict[str, str]
    turns: list[Turn]
    frames: list[Frame]
    #: The colours whose logs (info, standard error) the frames carry: the viewer's own bots.
    logs: list[str]


# --------------------------------------------------------------------------- board layout


def _lattice(board: Board, c: int, n: int) -> tuple[float, float]:
    """Mathematical coordinates (y up) of column ``c``, number ``n``; neighbours are 1 apart.

    On the hexagonal board the columns are vertical lines, so the three axes (0, 1), (1, 0) and
    (1, 1) point up, down-right and up-right: pairwise 60 degrees apart.
    """
    if board.name == "hex":
        return c * _SQRT3_2, n - c / 2
    return float(c), float(n)


def board_layout(board: Board) -> Layout:
    """Screen coordinates (x right, y down) of every point, the board lines and the labels.

    Neighbouring points are 1 apart; ``width`` and ``height`` include a margin of 1 around the
    points, so ``0 0 width height`` is a viewBox that shows the whole board.

    >>> layout = board_layout(engine.HEX)
    >>> layout["kind"], len(layout["points"]), len(layout["lines"])
    ('hex', 85, 222)
    >>> layout = board_layout(engine.SQUARE8)
    >>> layout["kind"], layout["points"][0], len(layout["lines"])
    ('square', {'name': 'a1', 'x': 1.0, 'y': 8.0}, 210)
    """
    cells = [
        (c, n, _lattice(board, c, n))
        for c, (lo, hi) in enumerate(board.columns)
        for n in range(lo, hi + 1)
    ]
    min_x = min(x for _, _, (x, _) in cells)
    max_y = max(y for _, _, (_, y) in cells)

    def screen(x: float, y: float) -> tuple[float, float]:
        return round(x - min_x + _MARGIN, _DIGITS), round(max_y - y + _MARGIN, _DIGITS)

    where: dict[tuple[int, int], tuple[float, float]] = {}
    points: list[Point] = []
    for c, n, (x, y) in cells:
        sx, sy = screen(x, y)
        where[(c, n)] = (sx, sy)
        points.append({"name": f"{chr(ord('a') + c)}{n}", "x": sx, "y": sy})
    lines: list[list[float]] = []
    for (c, n), (x1, y1) in where.items():
        for dc, dn in board.axes:
            other = where.get((c + dc, n + dn))
            if other is not None:
                lines.append([x1, y1, other[0], other[1]])
    width = round(max(x for x, _ in where.values()) + _MARGIN, _DIGITS)
    height = round(max(y for _, y in where.values()) + _MARGIN, _DIGITS)
    return {
        "kind": "hex" if board.name == "hex" else "square",
        "name": board.name,
        "width": width,
        "height": height,
        "points": points,
        "lines": lines,
        "labels": _labels(board, where),
    }


def _labels(board: Board, where: dict[tuple[int, int], tuple[float, float]]) -> list[Label]:
    """Coordinate labels: each letter below its column, each number left of its first point."""
    out: list[Label] = []
    gap = 0.62
    for c, (lo, _) in enumerate(board.columns):
        x, y = where[(c, lo)]
        out.append({"text": chr(ord("a") + c), "x": x, "y": round(y + gap, _DIGITS)})
    numbers = sorted({n for lo, hi in board.columns for n in range(lo, hi + 1)})
    for n in numbers:
        c = min(c for c, (lo, hi) in enumerate(board.columns) if lo <= n <= hi)
        x, y = where[(c, n)]
        if board.name == "hex":
            # Against the direction of equal numbers (down-right on the screen).
            lx, ly = x - gap * _SQRT3_2, y - gap / 2
        else:
            lx, ly = x - gap, y
        out.append({"text": str(n), "x": round(lx, _DIGITS), "y": round(ly, _DIGITS)})
    return out


# --------------------------------------------------------------------------- frames


def _turn_labels(record: Record) -> list[tuple[str, int]]:
    """For each action: the notation of the turn it belongs to, and that turn's index."""
    turns = engine.split_turns(record.actions, record.variant)
    texts = engine.write_moves(record.actions, record.variant).split()
    if len(texts) != len(turns):  # cannot happen for a legal game; keep the widget working
        texts = [f"{k + 1}." + ";".join(str(a) for a in turn) for k, turn in enumerate(turns)]
    out: list[tuple[str, int]] = []
    for k, turn in enumerate(turns):
        out.extend((texts[k], k) for _ in turn)
    return out


def _frame_changes(before: State, action: Action, after: State) -> Changes:
    """What an action visibly did: markers flipped, pieces taken off, the ring moved."""
    g = before.geometry
    flipped: list[str] = []
    removed: list[str] = []
    moved = None
    if action.kind == Kind.MOVE:
        moved = [action.a, action.b]
        flips = (before.markers[0] & after.markers[1]) | (before.markers[1] & after.markers[0])
        flipped = g.bit_names(flips)
    elif action.kind == Kind.REMOVE_ROW:
        removed = g.bit_names(
            (before.markers[0] | before.markers[1]) & ~(after.markers[0] | after.markers[1])
        )
    elif action.kind == Kind.REMOVE_RING:
        removed = [action.a]
    return {"flipped": flipped, "removed": removed, "moved": moved}


_KINDS = {
    Kind.PLACE: "place",
    Kind.MOVE: "move",
    Kind.REMOVE_ROW: "remove-row",
    Kind.REMOVE_RING: "remove-ring",
    Kind.PASS: "pass",
}


def replay_frames(
    record: Record, transcript: JSON = None, *, after: int = 0, logs: Collection[str] = ()
) -> Replay:
    """The widget's JSON data for a game: the board, the players, the result, one frame a ply.

    ``transcript`` (optional) is the referee's account of the game; the think time, the
    ``info`` a bot sent with each action and what it wrote to its standard error meanwhile are
    copied to the matching frames. A missing, malformed or non-matching transcript adds nothing
    and is never an error. ``logs``: the colours whose logs the transcript holds for the viewer
    (it was redacted for them), said in the data so that the widget shows their panel.

    ``after``: only the frames after that ply (a live game's watcher has the others), which
    saves most of the work; the turns are all there. It cannot go with a transcript (whose
    entries are matched from the first frame on): ``ValueError``.

    >>> tail = replay_frames(engine.Record.parse("1.e3 2.a5 3.b4"), after=2)
    >>> [f["n"] for f in tail["frames"]], len(tail["turns"])
    ([3], 3)
    """
    if after and transcript is not None:
        raise ValueError("replay_frames: a transcript is merged from the first frame, not after")
    v = record.variant
    state = State(v)
    labels = _turn_labels(record)
    frames: list[Frame] = []
    turns: list[Turn] = []
    for n, action in enumerate(record.actions, 1):
        by = state.turn.label
        label, turn_index = labels[n - 1]
        if turn_index == len(turns):
            turns.append({"label": label, "by": by, "first": n, "last": n})
        else:
            turns[turn_index]["last"] = n
        if n <= after:
            state.push(action)
            continue
        before = state.copy(stack=False)
        state.push(action)
        frame: Frame = {
            "n": n,
            "turn": label,
            "turn_index": turn_index,
            "action": str(action),
            "kind": _KINDS[action.kind],
            "by": by,
            "position": state.to_json(),
            **_frame_changes(before, action, state),
        }
        frames.append(frame)
    _merge_transcript(frames, transcript)
    outcome = record.outcome
    headers = record.headers
    return {
        "variant": v.name,
        "title": v.title or v.name,
        "rings": v.rings,
        "rows_to_win": v.rows_to_win,
        "board": board_layout(v.board),
        "white": headers.get("White", ""),
        "black": headers.get("Black", ""),
        "result": outcome.result.value if outcome else None,
        "score": outcome.result.score if outcome else "*",
        "termination": outcome.termination.value if outcome else None,
        "headers": dict(headers),
        "initial": State(v).to_json(),
        "turns": turns,
        "frames": frames,
        "logs": [c for c in ("white", "black") if c in logs],
    }


# --------------------------------------------------------------------------- transcripts

_ENTRY_LISTS = ("actions", "moves", "plies", "entries")
_ACTION_KEYS = ("action", "move", "token", "text")
_THINK_KEYS = ("think_ms", "ms", "time_ms", "elapsed_ms")
#: Most of a bot's standard error shown with one frame (the referee keeps less).
_STDERR_CHARS = 4096
_REMOVAL = re.compile(r"^x([a-z]\d{1,2}-[a-z]\d{1,2})x([a-z]\d{1,2})$")


def _entries(transcript: JSON) -> list[JSON]:
    if isinstance(transcript, list):
        return transcript
    if isinstance(transcript, Mapping):
        for key in _ENTRY_LISTS:
            value = transcript.get(key)
            if isinstance(value, list):
                return value
    return []


def _tokens(text: str) -> Iterator[str]:
    """The action tokens of an entry's text: one action, or a whole turn in notation."""
    body = text.strip().lower()
    if "." in body and body.split(".", 1)[0].isdigit():
        body = body.split(".", 1)[1]
    for part in body.split(";"):
        part = part.strip()
        m = _REMOVAL.match(part)
        if m:
            yield f"x{m.group(1)}"
            yield f"x{m.group(2)}"
        elif part:
            yield part


def _same(token: str, action: str) -> bool:
    try:
        return str(Action.parse(token)) == action
    except ValueError:
        return False


def _merge_transcript(frames: list[Frame], transcript: JSON) -> None:
    """Copy ``think_ms`` and ``info`` from transcript entries to the frames they describe.

    Entries are matched in order. An entry without an action text stands for the next frame;
    one with a text (a single action or a whole turn such as ``i8-f5;xg5-g9xa5``) covers the
    frames of those actions, and its time and info go on the first of them. Merging stops at
    the first entry that does not match the game (a transcript of another game, or an
    illegal last move that never became a frame).
    """
    pos = 0
    for entry in _entries(transcript):
        if pos >= len(frames):
            break
        if not isinstance(entry, Mapping):
            break
        text = next((v for k in _ACTION_KEYS if isinstance(v := entry.get(k), str)), None)
        first = pos
        if text is None:
            pos += 1
        else:
            tokens = list(_tokens(text))
            if not tokens:
                break
            for token in tokens:
                if pos < len(frames) and _same(token, frames[pos]["action"]):
                    pos += 1
                elif (
                    pos + 1 < len(frames)
                    and frames[pos]["kind"] == "remove-row"
                    and _same(token, frames[pos + 1]["action"])
                ):
                    pos += 2  # the short form names the ring only
                else:
                    return
        frame = frames[first]
        think = next((entry[k] for k in _THINK_KEYS if k in entry), None)
        if isinstance(think, int | float) and not isinstance(think, bool) and think >= 0:
            frame["think_ms"] = round(think)
        info = entry.get("info")
        if isinstance(info, str | int | float) and not isinstance(info, bool):
            frame["info"] = str(info)[:500]
        elif isinstance(info, Mapping | list):
            frame["info"] = info_text(info)[:500]  # keys and values to read, not JSON
        stderr = entry.get("stderr")
        if isinstance(stderr, str) and stderr:
            frame["stderr"] = stderr[-_STDERR_CHARS:]
        size = entry.get("stderr_bytes")
        if isinstance(size, int) and not isinstance(size, bool) and size > 0:
            frame["stderr_bytes"] = size


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> int:
    """``python -m arena.games.replay GAME.txt [-t TRANSCRIPT.json] [-o OUT.json]``: write the
    data."""
    import argparse
    import json
    import sys
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m arena.games.replay", description=main.__doc__)
    parser.add_argument("record", type=Path, help="a game record (headers and moves)")
    parser.add_argument("-t", "--transcript", type=Path, help="the referee's transcript (JSON)")
    parser.add_argument("-o", "--output", type=Path, help="where to write (default: stdout)")
    parser.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a record header, such as White=alpha (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        record = Record.parse(args.record.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        parser.error(str(e))
    for item in args.header:
        name, _, value = item.partition("=")
        record.headers[name] = value
    transcript = None
    if args.transcript:
        transcript = json.loads(args.transcript.read_text(encoding="utf-8"))
    logs = ("white", "black") if transcript is not None else ()  # the bots are yours
    text = json.dumps(replay_frames(record, transcript, logs=logs), separators=(",", ":")) + "\n"
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
