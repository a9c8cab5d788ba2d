"""``python -m engine``: a debugging shell, record replay, random self-play, perft and a benchmark.

The shell speaks one command per line on stdin and answers one line on stdout (documented in
docs/engine-cli.md)::

    new [VARIANT]            -> ok
    play TOK [TOK ...]       -> ok | error ...   (all or nothing)
    undo                     -> ok | error ...
    moves                    -> moves N: tok tok ...   (sorted)
    state                    -> state next=... turn=w|b wr=.. br=.. wm=.. bm=.. [result=..]
    setpos w|b wr=.. br=.. wm=.. bm=..   -> ok | error ...
    perft N                  -> perft N COUNT
    json                     -> the position as one line of JSON
    notation [long|short]    -> notation 1.e3 2.a5 ...   (the game so far)
    quit
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

from engine.actions import IllegalAction, InvalidAction
from engine.notation import write_moves
from engine.record import Record, RecordError, read_records
from engine.state import State, perft
from engine.variants import VARIANTS


class Shell:
    """The line protocol of ``python -m engine shell``; one instance keeps one game."""

    def __init__(self) -> None:
        self.state = State("yinsh")

    def handle(self, line: str) -> str | None:
        """Answer one command line; ``None`` means quit."""
        words = line.split()
        if not words:
            return "error empty command"
        cmd, args = words[0].lower(), words[1:]
        try:
            if cmd == "quit":
                return None
            if cmd == "new":
                if len(args) > 1:
                    return "error usage: new [VARIANT]"
                self.state = State(args[0] if args else "yinsh")
                return "ok"
            if cmd == "play":
                return self._play(args)
            if cmd == "undo":
                if not self.state.history:
                    return "error nothing to undo"
                self.state.pop()
                return "ok"
            if cmd == "moves":
                tokens = sorted(str(a) for a in self.state.legal_actions())
                return f"moves {len(tokens)}: {' '.join(tokens)}".rstrip()
            if cmd == "state":
                return f"state {self.state.describe()}"
            if cmd == "setpos":
                return self._setpos(args)
            if cmd == "perft":
                if len(args) != 1 or not args[0].isdigit():
                    return "error usage: perft N"
                depth = int(args[0])
                return f"perft {depth} {perft(self.state.copy(), depth)}"
            if cmd == "json":
                return json.dumps(self.state.to_json(), separators=(",", ":"))
            if cmd == "notation":
                form = args[0].lower() if args else "long"
                if form not in ("long", "short"):
                    return "error usage: notation [long|short]"
                moves = write_moves(self.state.history, self.state.variant, long=form == "long")
                return f"notation {moves}".rstrip()
            return f"error unknown command {cmd!r}"
        except ValueError as e:
            return f"error {e}"

    def _play(self, tokens: list[str]) -> str:
        if not tokens:
            return "error usage: play TOK [TOK ...]"
        done = 0
        try:
            for token in tokens:
                self.state.play(token)
                done += 1
        except (InvalidAction, IllegalAction) as e:
            for _ in range(done):
                self.state.pop()
            return f"error {e}"
        return "ok"

    def _setpos(self, args: list[str]) -> str:
        if not args or args[0] not in ("w", "b"):
            return "error usage: setpos w|b wr=a2,.. br=.. wm=.. bm=.."
        fields: dict[str, list[str]] = {"wr": [], "br": [], "wm": [], "bm": []}
        for arg in args[1:]:
            name, eq, value = arg.partition("=")
            if not eq or name not in fields:
                return f"error bad field {arg!r} (expected wr=, br=, wm=, bm=)"
            fields[name] = [p.lower() for p in value.split(",") if p]
        self.state = State.from_setup(
            self.state.variant,
            0 if args[0] == "w" else 1,
            fields["wr"],
            fields["br"],
            fields["wm"],
            fields["bm"],
        )
        return "ok"

    def run(self, lines: Iterable[str], out: TextIO) -> None:
        for line in lines:
            if not line.strip():
                continue
            answer = self.handle(line)
            if answer is None:
                return
            out.write(answer + "\n")
            out.flush()


def random_game(v: str, rng: random.Random) -> State:
    """A game of uniformly random legal actions, played to its end."""
    s = State(v)
    legal, push, rnd = s.legal_actions, s.push, rng.random
    while True:
        actions = legal()
        if not actions:
            return s
        push(actions[int(rnd() * len(actions))])


def bench(variants: list[str], seconds: float, seed: int) -> list[str]:
    """Random full-game playouts per second and actions per second, one line per variant."""
    lines = []
    for v in variants:
        rng = random.Random(seed)
        games = actions = 0
        start = time.perf_counter()
        while True:
            actions += len(random_game(v, rng).history)
            games += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        lines.append(f"{v}: {games / elapsed:.0f} games/s, {actions / elapsed:.0f} actions/s")
    return lines


def replay_lines(record: Record, *, short: bool = False) -> list[str]:
    """What ``replay`` prints for a file of one game: the final position and the result."""
    s = record.replay()
    lines = [
        f"variant {record.variant.name}, {len(record.actions)} actions",
        f"state {s.describe()}",
        f"removed white={s.removed[0]} black={s.removed[1]} pool={s.pool}",
        _result(record),
    ]
    if short:
        lines.append(write_moves(record.actions, record.variant, long=False))
    return lines


def game_line(record: Record) -> str:
    """What ``replay`` prints for each game of a file of several: variant, length, result."""
    return f"variant {record.variant.name}, {len(record.actions)} actions, {_result(record)}"


def _result(record: Record) -> str:
    if record.outcome is None:
        return "result * (unfinished)"
    o = record.outcome
    return f"result {o.result.value} ({o.result.score}) by {o.termination.value}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("shell", help="the line protocol on stdin/stdout")
    p = sub.add_parser("replay", help="check a record file (one game or many) or a line of moves")
    p.add_argument("file", help="a record file, a bare line of moves, or - for stdin")
    p.add_argument("--variant", default="yinsh", help="for a bare line of moves (default yinsh)")
    p.add_argument("--short", action="store_true", help="print the moves in the short form")
    p = sub.add_parser("selfplay", help="write random games as record files")
    p.add_argument("--variant", default="yinsh", choices=sorted(VARIANTS))
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--short", action="store_true", help="write the short form")
    p = sub.add_parser("perft", help="count action sequences of a given length")
    p.add_argument("depth", type=int)
    p.add_argument("--variant", default="yinsh", choices=sorted(VARIANTS))
    p.add_argument("--moves", default="", help="actions to play first, e.g. 'e3 a5 b5'")
    p.add_argument("--divide", action="store_true", help="one count per first action")
    p = sub.add_parser("bench", help="random playouts per second, one line per variant")
    p.add_argument("--seconds", type=float, default=3.0, help="per variant (default 3)")
    p.add_argument("--variant", action="append", choices=sorted(VARIANTS))
    p.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    if args.command == "shell":
        Shell().run(sys.stdin, sys.stdout)
        return 0
    if args.command == "replay":
        try:
            text = sys.stdin.read() if args.file == "-" else Path(args.file).read_text()
        except (OSError, UnicodeDecodeError) as e:
            print(f"{args.file}: cannot read: {e}", file=sys.stderr)
            return 1
        try:
            records = list(read_records(text, default_variant=args.variant))
            if not records:  # an empty file: an empty game, as a file of one game
                records = [Record.parse(text, default_variant=args.variant)]
        except RecordError as e:
            print(f"{args.file}: {e}", file=sys.stderr)
            return 1
        if len(records) == 1:
            print("\n".join(replay_lines(records[0], short=args.short)))
            return 0
        for number, record in enumerate(records, 1):
            print(f"game {number}: {game_line(record)}")
            if args.short:
                print(write_moves(record.actions, record.variant, long=False))
        print(f"{len(records)} games")
        return 0
    if args.command == "selfplay":
        args.out.mkdir(parents=True, exist_ok=True)
        rng = random.Random(args.seed)
        for i in range(1, args.games + 1):
            s = random_game(args.variant, rng)
            record = Record.from_state(
                s,
                White="random",
                Black="random",
                Event=f"selfplay seed {args.seed}",
                Round=str(i),
            )
            path = args.out / f"{args.variant}-{args.seed}-{i:04d}.txt"
            path.write_text(record.to_text(long=not args.short))
            assert s.outcome is not None
            print(f"{path}: {s.outcome.result.value} by {s.outcome.termination.value}")
        return 0
    if args.command == "perft":
        s = State(args.variant)
        try:
            for token in args.moves.split():
                s.play(token)
        except ValueError as e:
            print(f"error {e}", file=sys.stderr)
            return 1
        if args.divide:
            total = 0
            for a in sorted(s.legal_actions(), key=str):
                s.push(a)
                n = perft(s, args.depth - 1)
                s.pop()
                total += n
                print(f"{a} {n}")
            print(f"perft {args.depth} {total}")
        else:
            print(f"perft {args.depth} {perft(s, args.depth)}")
        return 0
    if args.command == "bench":
        for line in bench(args.variant or list(VARIANTS), args.seconds, args.seed):
            print(line, flush=True)
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands
