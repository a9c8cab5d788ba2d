"""``./dev bench referee [--games 10]``: what the referee itself costs.

Prints:

* the referee's own cost per action (CPU time of the referee's thread between the first and the
  last action of a game, divided by the actions: transport, validation, bookkeeping), and the
  wall time of an action, with an *instant* bot (a small process that answers each request
  with its first legal action, without even parsing JSON), unsandboxed and sandboxed, with
  and without freezing bots between turns;
* games per minute of random against random, with and without the sandbox;
* the fraction of a game's wall time that is the referee's own work.

The figures are medians over several games; run it on an idle machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arena.referee import sandbox as sb
from arena.referee.bots import BotSpec
from arena.referee.game import GameConfig, TimeControl
from arena.referee.library import ROOT, sandbox_settings
from arena.referee.match import Referee

INSTANT_BOT = textwrap.dedent(
    """\
    import sys
    out = sys.stdout
    for line in sys.stdin:
        if '"type":"request"' in line:
            start = line.index('"actions":["') + 12
            out.write('{"type":"action","action":"' + line[start:line.index('"', start)] + '"}\\n')
        elif '"type":"hello"' in line:
            out.write('{"type":"ready","name":"instant","version":"1"}\\n')
        else:
            break
        out.flush()
    """
)


def _instant_bot(folder: Path) -> BotSpec:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.py").write_text(INSTANT_BOT)
    (folder / "bot.toml").write_text('name = "instant"\ncommand = "python3 main.py"\n')
    for p in (folder, *folder.iterdir()):
        p.chmod(0o755)
    return BotSpec.load(folder, trusted=True)


def _per_action(referee: Referee, bot: BotSpec, games: int, variant: str) -> tuple[float, float]:
    """Median referee CPU microseconds and wall microseconds per action."""
    cpu: list[float] = []
    wall: list[float] = []
    for seed in range(games):
        marks: list[tuple[float, float]] = []

        def on_action(
            state: Any, action: Any, ms: float, marks: list[tuple[float, float]] = marks
        ) -> None:
            marks.append((time.thread_time(), time.perf_counter()))

        config = GameConfig(variant, bot, bot, TimeControl(600_000, 0), seed=seed)
        referee.play(config, on_action=on_action)
        if len(marks) > 10:
            n = len(marks) - 1
            cpu.append((marks[-1][0] - marks[0][0]) / n * 1e6)
            wall.append((marks[-1][1] - marks[0][1]) / n * 1e6)
    return statistics.median(cpu), statistics.median(wall)


def _throughput(referee: Referee, bot: BotSpec, games: int, variant: str) -> tuple[float, float]:
    """Games per minute (one at a time) and the referee's share of a game's wall time."""
    started = time.perf_counter()
    shares = []
    for seed in range(games):
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        referee.play(GameConfig(variant, bot, bot, TimeControl(600_000, 0), seed=seed))
        shares.append((time.thread_time() - cpu0) / (time.perf_counter() - wall0))
    seconds = time.perf_counter() - started
    return games * 60.0 / seconds, statistics.median(shares)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev bench referee", description=__doc__)
    parser.add_argument("--games", type=int, default=10, help="games per figure (default 10)")
    parser.add_argument("--variant", default="yinsh")
    parser.add_argument("--state-dir", default=None, help="sandbox state (default: a temp dir)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="yinsh-bench-") as tmp:
        state_dir = args.state_dir or str(Path(tmp) / "sandbox")
        Path(tmp).chmod(0o711)
        instant = _instant_bot(Path(tmp) / "instant")
        random_bot = BotSpec.load(ROOT / "bots" / "random", trusted=True)
        host = sb.probe(sb.SandboxSettings(state_dir=state_dir)).level
        levels = [sb.ProtectionLevel.NONE] + ([host] if host is not sb.ProtectionLevel.NONE else [])
        print(f"host protection level: {host.value}; {args.games} games per figure, {args.variant}")
        for level in levels:
            box = sb.Sandbox(sandbox_settings(level, state_dir=state_dir), level=level)
            try:
                label = (
                    "unsandboxed" if level is sb.ProtectionLevel.NONE else f"sandbox {level.value}"
                )
                pauses = [True, False] if level is sb.ProtectionLevel.FULL else [True]
                for pause in pauses:
                    ref = Referee(box, pause_between_turns=pause)
                    cpu, wall = _per_action(ref, instant, args.games, args.variant)
                    note = (
                        ""
                        if level is not sb.ProtectionLevel.FULL
                        else (", freezing between turns" if pause else ", no freezing")
                    )
                    print(
                        f"{label}{note}: referee cost per action {cpu:.0f} us "
                        f"(wall time per action with an instant bot {wall:.0f} us)"
                    )
                rate, share = _throughput(Referee(box), random_bot, args.games, args.variant)
                print(
                    f"{label}: random vs random {rate:.0f} games/min; the referee's own work is "
                    f"{share * 100:.1f}% of a game's wall time"
                )
            finally:
                box.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
