"""``manage.py tournament BOT BOT ...``: a round-robin, K games at once, resumable."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import stats
from arena.local import cli
from arena.referee import GameResult, Referee
from arena.referee.tournament import (
    FinishedGame,
    Job,
    Tournament,
    TournamentError,
    cross_table,
    rating_table,
    run_games,
)


class Command(BaseCommand):
    help = (
        "Play a round-robin tournament: every pair meets twice per round, once with each "
        "colour, from the same opening. Prints a line per finished game, then a cross-table, "
        "the standings and a rating table; writes every game and the tournament's state to "
        "--out. Ctrl-C stops cleanly (running games are aborted and not counted); --resume "
        "continues from --out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bots", nargs="*", metavar="BOT", help="bot folders or files")
        parser.add_argument("--rounds", type=int, default=1, help="rounds (default 1)")
        parser.add_argument("--concurrency", type=int, default=1, help="games at once")
        parser.add_argument("--variant", default="yinsh", help="yinsh, blitz, yangsh, yangsh7")
        parser.add_argument("--time", default="10+0.1", help="seconds + increment (10+0.1)")
        parser.add_argument("--seed", type=int, default=1, help="seed of the schedule's games")
        parser.add_argument(
            "--opening-plies",
            type=int,
            default=settings.OPENING_PLIES,
            help="rings placed at random (seeded) before the bots play; both games of a pair "
            f"start from the same ones (default {settings.OPENING_PLIES}; 0: the empty board)",
        )
        parser.add_argument("--out", type=Path, required=True, help="folder for games and state")
        parser.add_argument(
            "--resume", action="store_true", help="continue the tournament saved in --out"
        )
        parser.add_argument(
            "--no-sandbox",
            action="store_true",
            help="run the bots as plain processes (only for bots you trust)",
        )

    def handle(self, *args: object, **opts: Any) -> None:
        out: Path = opts["out"]
        no_sandbox = opts["no_sandbox"]
        if opts["concurrency"] < 1:
            raise CommandError("--concurrency must be at least 1")
        try:
            tournament = self._tournament(out, opts, no_sandbox)
        except TournamentError as e:
            raise CommandError(str(e)) from None
        jobs = tournament.jobs()
        total = len(tournament.schedule)
        box = cli.make_sandbox(no_sandbox=no_sandbox)
        w = self.stdout.write
        try:
            w(cli.describe_sandbox(box, no_sandbox=no_sandbox))
            w(
                f"Tournament: {', '.join(tournament.names)}; {tournament.rounds} round(s), "
                f"{total} games of {tournament.variant} at {tournament.time}, "
                f"{opts['concurrency']} at once"
            )
            if opts["resume"]:
                w(f"Resuming: {len(tournament.games)} games already played, {len(jobs)} to go")
            w(
                f"Openings: {tournament.plies} ring placements, the same for both games of a pair"
                if tournament.plies
                else "Openings: none, every game starts from the empty board"
            )
            w(f"Files: {out}")
            jobs = cli.built_jobs(jobs, cli.builder(box), w)
            tournament.save()
            started = time.monotonic()
            width = len(str(total))

            def report(
                job: Job, game: FinishedGame | None, outcome: GameResult | Exception
            ) -> None:
                names = f"{job.config.white.name} - {job.config.black.name}"
                if game is None:
                    what = (
                        "aborted (not counted)"
                        if isinstance(outcome, GameResult)
                        else f"not played ({outcome}); --resume will play it"
                    )
                    w(f"[{job.number:>{width}}] {names}: {what}")
                    return
                tournament.add(game)
                w(
                    f"[{job.number:>{width}}] {names}: {game.score_text} {game.termination}: "
                    f"{game.reason} ({game.duration_s:.1f} s)  "
                    f"-- {len(tournament.games)}/{total} done"
                )

            with cli.interruptible() as cancel:
                run_games(
                    Referee(box),
                    jobs,
                    out,
                    concurrency=opts["concurrency"],
                    cancel=cancel,
                    report=report,
                )
            results = tournament.results()
            table = tournament.standings()
            w("")
            w(cross_table(sorted(table, key=lambda s: s.seed)))
            w("")
            w(stats.standings_text(table))
            w("")
            w(rating_table(results, tournament.names))
            w(
                f"\n{len(results)} of {total} games in {time.monotonic() - started:.1f} s; "
                f"state and games in {out}"
            )
            if cancel.is_set():
                raise CommandError(
                    f"interrupted: {len(tournament.games)} of {total} games played; "
                    f"continue with --resume --out {out}",
                    returncode=130,
                )
            if missing := tournament.missing():
                # Some games were aborted or could not start: not a finished tournament.
                raise CommandError(
                    f"incomplete: {missing} of {total} games were not played; "
                    f"play them with --resume --out {out}"
                )
        finally:
            box.close()

    def _tournament(self, out: Path, opts: dict[str, Any], no_sandbox: bool) -> Tournament:
        given = [cli.load_bot(b, no_sandbox=no_sandbox) for b in opts["bots"]]
        if opts["resume"]:
            saved = Tournament.load(out, trusted=True if no_sandbox else None)
            if given:
                asked = Tournament(
                    out,
                    given,
                    cli.variant_name(opts["variant"]),
                    cli.time_control(opts["time"]),
                    opts["rounds"],
                    opts["seed"],
                    opts["opening_plies"],
                )
                saved.check_same(asked)
            return saved
        if len(given) < 2:
            raise CommandError("a tournament needs at least two bots")
        if opts["rounds"] < 1:
            raise CommandError("--rounds must be at least 1")
        if (out / "tournament.json").exists():
            raise CommandError(f"{out} already holds a tournament: use --resume, or another --out")
        return Tournament(
            out,
            given,
            cli.variant_name(opts["variant"]),
            cli.time_control(opts["time"]),
            opts["rounds"],
            opts["seed"],
            opts["opening_plies"],
        )
