"""``manage.py match BOT_A BOT_B``: a match between two bots, colours alternating."""

from __future__ import annotations

import datetime as dt
import time
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.local import cli
from arena.rating import elo_diff
from arena.referee.match import GameConfig, GameResult, Referee
from arena.referee.tournament import FinishedGame, Job, format_elo, run_games


class Command(BaseCommand):
    help = (
        "Play a match of N games between two bots (folders with bot.toml, or executable "
        "files), colours alternating; print each result and a summary with the Elo "
        "difference; write every game's record and JSON transcript to --out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bot_a", metavar="BOT_A", help="a bot folder or executable file")
        parser.add_argument("bot_b", metavar="BOT_B", help="a bot folder or executable file")
        parser.add_argument("--games", type=int, default=2, help="games to play (default 2)")
        parser.add_argument("--variant", default="yinsh", help="yinsh, blitz, yangsh, yangsh7")
        parser.add_argument(
            "--time", default="10+0.1", help="seconds per game + increment per turn (10+0.1)"
        )
        parser.add_argument("--seed", type=int, default=1, help="seed sent to the bots")
        parser.add_argument("--out", type=Path, default=None, help="folder for the game files")
        parser.add_argument("--concurrency", type=int, default=1, help="games at once")
        parser.add_argument(
            "--no-sandbox",
            action="store_true",
            help="run the bots as plain processes (only for bots you trust)",
        )

    def handle(self, *args: object, **opts: Any) -> None:
        no_sandbox = opts["no_sandbox"]
        a = cli.load_bot(opts["bot_a"], no_sandbox=no_sandbox)
        b = cli.load_bot(opts["bot_b"], no_sandbox=no_sandbox)
        variant = cli.variant_name(opts["variant"])
        cli.require_variant(variant, a, b)
        tc = cli.time_control(opts["time"])
        games = opts["games"]
        if games < 1:
            raise CommandError("--games must be at least 1")
        if opts["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1")
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out: Path = opts["out"] or settings.VAR_DIR / "matches" / f"{stamp}-{a.name}-vs-{b.name}"
        seed = opts["seed"]
        jobs = []
        width = len(str(games))
        for i in range(games):
            white, black = (a, b) if i % 2 == 0 else (b, a)
            config = GameConfig(
                variant,
                white,
                black,
                tc,
                seed=seed + i // 2,
                headers=(("Event", f"{a.name} vs {b.name}"), ("Round", str(i + 1))),
            )
            jobs.append(Job(i + 1, config, f"game-{i + 1:0{width}d}"))

        box = cli.make_sandbox(no_sandbox=no_sandbox)
        w = self.stdout.write
        try:
            w(cli.describe_sandbox(box, no_sandbox=no_sandbox))
            w(f"Match: {a.label} vs {b.label}, {games} games of {variant} at {tc}, seed {seed}")
            w(f"Files: {out}")
            jobs = cli.built_jobs(jobs, cli.builder(box), w)
            referee = Referee(box)
            started = time.monotonic()
            done: list[FinishedGame] = []

            def report(
                job: Job, game: FinishedGame | None, outcome: GameResult | Exception
            ) -> None:
                head = f"[{job.number:>{width}}/{games}]"
                names = f"{job.config.white.name} - {job.config.black.name}"
                if game is None:
                    what = (
                        "aborted (not counted)"
                        if isinstance(outcome, GameResult)
                        else f"not played: {outcome}"
                    )
                    w(f"{head} {names}: {what}")
                    return
                done.append(game)
                w(
                    f"{head} {names}: {game.score_text} {game.termination}: {game.reason} "
                    f"({game.duration_s:.1f} s)"
                )

            with cli.interruptible() as cancel:
                run_games(
                    referee,
                    jobs,
                    out,
                    concurrency=opts["concurrency"],
                    cancel=cancel,
                    report=report,
                )
            self._summary(a.name, b.name, done, time.monotonic() - started, out)
            if cancel.is_set():
                raise CommandError(
                    f"interrupted: {len(done)} of {games} games finished", returncode=130
                )
        finally:
            box.close()

    def _summary(
        self, a_name: str, b_name: str, done: list[FinishedGame], seconds: float, out: Path
    ) -> None:
        wins = draws = losses = 0
        for g in done:
            a_white = g.number % 2 == 1  # A has White in the odd games
            score = g.white_score if a_white else 1 - g.white_score
            if score == 1:
                wins += 1
            elif score == 0:
                losses += 1
            else:
                draws += 1
        n = len(done)
        w = self.stdout.write
        w("")
        pct = (wins + draws / 2) / n if n else 0.0
        w(f"Score of {a_name} vs {b_name}: {wins} - {losses} - {draws}  [{pct:.3f}] {n}")
        if n:
            diff, error = elo_diff(wins, draws, losses)
            w(f"Elo difference: {format_elo(diff, error)} (95% error bars)")
            ends = Counter(g.termination for g in done)
            w("Terminations: " + ", ".join(f"{k} {v}" for k, v in ends.most_common()))
        w(f"{n} games in {seconds:.1f} s; records and transcripts in {out}")
