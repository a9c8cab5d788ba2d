"""``manage.py match BOT_A BOT_B``: a match between two bots in colour-reversed pairs, or an
SPRT test of A against B (``--sprt ELO0,ELO1``) that stops when its verdict is in."""

from __future__ import annotations

import datetime as dt
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import stats
from arena.local import cli
from arena.referee import GameConfig, GameResult, Referee
from arena.referee.openings import opening
from arena.referee.tournament import FinishedGame, Job, run_games

#: The game budget of an SPRT test when --games is not given.
SPRT_GAMES = 2000


@dataclass
class _Sprt:
    """A running SPRT: the pairs completed so far and the verdict once a bound is crossed."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    #: The candidate's (A's) points in each game of a pair, by pair number.
    games: dict[int, dict[int, float]] = field(default_factory=dict)
    pair_points: list[float] = field(default_factory=list)
    result: stats.SprtResult | None = None

    def add(self, number: int, a_score: float) -> bool:
        """Count a finished game (1-based number); True when it completed a pair."""
        pair = (number - 1) // 2
        seen = self.games.setdefault(pair, {})
        seen[number] = a_score
        if len(seen) < 2:
            return False
        self.pair_points.append(sum(seen.values()))
        self.result = stats.sprt(
            stats.pentanomial(self.pair_points), self.elo0, self.elo1, self.alpha, self.beta
        )
        return True

    @property
    def decided(self) -> bool:
        return self.result is not None and self.result.verdict is not stats.Verdict.NONE


class Command(BaseCommand):
    help = (
        "Play a match between two bots (folders with bot.toml, or executable files) in "
        "colour-reversed pairs, both games of a pair from the same opening; print each result "
        "and a summary with the Elo difference; write every game's record and JSON transcript "
        "to --out. With --sprt ELO0,ELO1, play until the sequential test accepts H0 (A is not "
        "ELO1 stronger than B) or H1 (it is), or the game budget runs out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bot_a", metavar="BOT_A", help="a bot folder or executable file")
        parser.add_argument("bot_b", metavar="BOT_B", help="a bot folder or executable file")
        parser.add_argument(
            "--games",
            type=int,
            default=None,
            help=f"games to play (default 2; with --sprt, the budget: default {SPRT_GAMES})",
        )
        parser.add_argument("--variant", default="yinsh", help="yinsh, blitz, yangsh, yangsh7")
        parser.add_argument(
            "--time", default="10+0.1", help="seconds per game + increment per turn (10+0.1)"
        )
        parser.add_argument("--seed", type=int, default=1, help="seed of the openings and bots")
        parser.add_argument(
            "--opening-plies",
            type=int,
            default=settings.OPENING_PLIES,
            help="ring placements drawn at random for each pair (default "
            f"{settings.OPENING_PLIES}, ARENA_OPENING_PLIES; 0 starts from the empty board)",
        )
        parser.add_argument(
            "--sprt",
            metavar="ELO0,ELO1",
            default=None,
            help=f"test H0 'A is ELO0 Elo stronger' against H1 'ELO1 stronger' "
            f"(e.g. {stats.DEFAULT_ELO0:g},{stats.DEFAULT_ELO1:g})",
        )
        parser.add_argument(
            "--alpha", type=float, default=stats.DEFAULT_ALPHA, help="false H1 rate (0.05)"
        )
        parser.add_argument(
            "--beta", type=float, default=stats.DEFAULT_BETA, help="false H0 rate (0.05)"
        )
        parser.add_argument("--out", type=Path, default=None, help="folder for the game files")
        parser.add_argument("--concurrency", type=int, default=1, help="games at once")
        parser.add_argument(
            "--no-sandbox",
            action="store_true",
            help="run the bots as plain processes (only for bots you trust)",
        )

    def handle(self, *args: object, **opts: Any) -> None:
        test = _parse_sprt(opts["sprt"], opts["alpha"], opts["beta"])
        no_sandbox = opts["no_sandbox"]
        a = cli.load_bot(opts["bot_a"], no_sandbox=no_sandbox)
        b = cli.load_bot(opts["bot_b"], no_sandbox=no_sandbox)
        variant = cli.variant_name(opts["variant"])
        cli.require_variant(variant, a, b)
        tc = cli.time_control(opts["time"])
        games = opts["games"] if opts["games"] is not None else SPRT_GAMES if test else 2
        if games < 1 or (test is not None and games < 2):
            raise CommandError(f"--games must be at least {2 if test else 1}")
        if test is not None:
            games += games % 2  # whole pairs
        if opts["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1")
        plies = opts["opening_plies"]
        seed = opts["seed"]
        try:
            openings = [opening(variant, seed + pair, plies) for pair in range((games + 1) // 2)]
        except ValueError as e:
            raise CommandError(f"--opening-plies: {e}") from None
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out: Path = opts["out"] or settings.VAR_DIR / "matches" / f"{stamp}-{a.name}-vs-{b.name}"
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
                opening=openings[i // 2],
                headers=(("Event", f"{a.name} vs {b.name}"), ("Round", str(i + 1))),
            )
            jobs.append(Job(i + 1, config, f"game-{i + 1:0{width}d}"))

        box = cli.make_sandbox(no_sandbox=no_sandbox)
        w = self.stdout.write
        try:
            w(cli.describe_sandbox(box, no_sandbox=no_sandbox))
            what = f"{games} games" if test is None else f"an SPRT of at most {games} games"
            w(f"Match: {a.label} vs {b.label}, {what} of {variant} at {tc}, seed {seed}")
            if test is not None:
                lower, upper = stats.bounds(test.alpha, test.beta)
                w(
                    f"SPRT: H0 elo {test.elo0:g}, H1 elo {test.elo1:g}, alpha {test.alpha:g}, "
                    f"beta {test.beta:g}; LLR bounds ({lower:.2f}, {upper:.2f})"
                )
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
                if test is not None and not test.decided and test.add(game.number, _a_score(game)):
                    r = test.result
                    assert r is not None
                    w(f"  pairs {r.pairs} {_counts(r)}: {_llr(r)}")
                    if test.decided:
                        cancel.set()  # the verdict is in: the other games are not needed

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
            if test is not None:
                self._verdict(test, games)
            if cancel.is_set() and not (test is not None and test.decided):
                raise CommandError(
                    f"interrupted: {len(done)} of {games} games finished", returncode=130
                )
        finally:
            box.close()

    def _summary(
        self, a_name: str, b_name: str, done: list[FinishedGame], seconds: float, out: Path
    ) -> None:
        score = stats.Score()
        for g in done:
            score.add(g.result, _a_side(g))
        wins, draws, losses, n = score.wins, score.draws, score.losses, score.games
        w = self.stdout.write
        w("")
        pct = score.points / n if n else 0.0
        w(f"Score of {a_name} vs {b_name}: {wins} - {losses} - {draws}  [{pct:.3f}] {n}")
        if n:
            e = stats.trinomial_estimate(wins, draws, losses)
            w(
                f"Elo difference: {_elo(e.elo)} [{_elo(e.low)}, {_elo(e.high)}] (per game, 95%), "
                f"LOS {100 * e.los:.1f}%"
            )
            ends = Counter(g.termination for g in done)
            w("Terminations: " + ", ".join(f"{k} {v}" for k, v in ends.most_common()))
        w(f"{n} games in {seconds:.1f} s; records and transcripts in {out}")

    def _verdict(self, test: _Sprt, games: int) -> None:
        w = self.stdout.write
        r = test.result or stats.sprt((0, 0, 0, 0, 0), test.elo0, test.elo1, test.alpha, test.beta)
        e = r.estimate
        if r.pairs:
            w(
                f"Pairs (0, 0.5, 1, 1.5, 2 points for A): {_counts(r)}; "
                f"Elo {_elo(e.elo)} [{_elo(e.low)}, {_elo(e.high)}] (pentanomial, 95%), "
                f"LOS {100 * e.los:.1f}%"
            )
        llr = f"{_llr(r)} [{test.elo0:g}, {test.elo1:g}]"
        if r.verdict is stats.Verdict.H1:
            w(f"H1 accepted: {llr}")
        elif r.verdict is stats.Verdict.H0:
            w(f"H0 accepted: {llr}")
        else:
            w(f"No verdict: {llr} after {r.pairs} pairs of a budget of {games // 2}")


def _parse_sprt(text: str | None, alpha: float, beta: float) -> _Sprt | None:
    if text is None:
        return None
    parts = text.split(",")
    try:
        if len(parts) != 2:
            raise ValueError
        elo0, elo1 = (float(p) for p in parts)
    except ValueError:
        raise CommandError(f"--sprt takes ELO0,ELO1 (e.g. 0,5), not {text!r}") from None
    try:
        stats.sprt((0, 0, 0, 0, 0), elo0, elo1, alpha, beta)  # the same checks as the test's
    except ValueError as e:
        raise CommandError(f"--sprt: {e}") from None
    return _Sprt(elo0, elo1, alpha, beta)


def _a_side(game: FinishedGame) -> str:
    """A's colour in a game: A has White in the odd-numbered games."""
    return "white" if game.number % 2 == 1 else "black"


def _a_score(game: FinishedGame) -> float:
    """A's points in a game."""
    return stats.points(game.result, _a_side(game))


def _counts(r: stats.SprtResult) -> str:
    return "-".join(str(c) for c in r.counts)


def _llr(r: stats.SprtResult) -> str:
    return f"LLR {r.llr:.2f} ({r.lower:.2f}, {r.upper:.2f})"


def _elo(x: float) -> str:
    if math.isinf(x):
        return "+inf" if x > 0 else "-inf"
    return f"{round(x, 1) + 0.0:+.1f}"  # never "-0.0"
