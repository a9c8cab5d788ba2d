"""``manage.py tournament BOT BOT ...``: a round robin, Swiss, gauntlet or knockout, K games at
once, resumable."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import stats
from arena.local import cli
from arena.referee import GameResult, Referee
from arena.referee.bots import BotSpec
from arena.referee.formats import Format, Round, swiss_rounds
from arena.referee.tournament import (
    DEFAULT_GAMES,
    FinishedGame,
    Job,
    Tournament,
    TournamentError,
    bracket_text,
    cross_table,
    gauntlet_table,
    rating_table,
    run_games,
    swiss_table,
)

FORMATS = [f.value for f in Format]


class Command(BaseCommand):
    help = (
        "Play a tournament: a round robin (the default: every pair meets twice per round, once "
        "with each colour, from the same opening), a double round robin, a Swiss, a gauntlet "
        "(the first bot against each other) or a knockout (seeded in the order given). Prints "
        "a line per finished game, each Swiss or knockout round's pairings, then the format's "
        "table and a rating table; writes every game and the tournament's state to --out. "
        "Ctrl-C stops cleanly (running games are aborted and not counted); --resume continues "
        "from --out."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bots", nargs="*", metavar="BOT", help="bot folders or files")
        parser.add_argument(
            "--format",
            choices=FORMATS,
            default=Format.ROUND_ROBIN.value,
            help="the competition format (default round-robin)",
        )
        parser.add_argument(
            "--rounds",
            type=int,
            help="round robins: how many times over (default 1); a Swiss: its rounds (default "
            "log2 of the bots, rounded up)",
        )
        parser.add_argument(
            "--games",
            type=int,
            help="round robins: games per pair in each round (default 2; a double round robin "
            "1, played twice); a Swiss, gauntlet or knockout: games per mini-match (default 2, "
            "a knockout's even)",
        )
        parser.add_argument(
            "--tiebreaks",
            type=int,
            default=2,
            help="a knockout's tie-break pairs of games before the decider, the higher seed "
            "(default 2)",
        )
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
            tournament.advance()  # a resumed Swiss's or knockout's next round, if it is due
            made = tournament.playing()
        except TournamentError as e:
            raise CommandError(str(e)) from None
        spec = tournament.spec
        box = cli.make_sandbox(no_sandbox=no_sandbox)
        w = self.stdout.write
        try:
            w(cli.describe_sandbox(box, no_sandbox=no_sandbox))
            w(
                f"Tournament: {', '.join(tournament.names)}; {_describe(tournament)}, "
                f"{tournament.variant} at {tournament.time}, {opts['concurrency']} at once"
            )
            if opts["resume"]:
                w(
                    f"Resuming: {len(tournament.games)} games already played, "
                    f"{tournament.missing()} to go"
                    + ("" if spec.fixed else f" in round {tournament.event.current_round}")
                )
            w(
                f"Openings: {tournament.plies} ring placements, the same for both games of a pair"
                if tournament.plies
                else "Openings: none, every game starts from the empty board"
            )
            w(f"Files: {out}")
            builder = cli.builder(box)
            built: dict[tuple[str, bool], BotSpec] = {}
            started = time.monotonic()
            width = len(str(spec.max_games))

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
                    f"-- {len(tournament.games)}/{len(tournament.schedule)} done"
                )

            with cli.interruptible() as cancel:
                # A round starts once every game made before it is finished: round robins and
                # gauntlets make all theirs at once, so only a Swiss or a knockout waits.
                while True:
                    if not spec.fixed:
                        for r in made:
                            w(_pairings(r, tournament.names))
                    jobs = tournament.jobs()
                    if not jobs:
                        break
                    jobs = cli.built_jobs(jobs, builder, w, built)
                    tournament.save()
                    run_games(
                        Referee(box),
                        jobs,
                        out,
                        concurrency=opts["concurrency"],
                        cancel=cancel,
                        report=report,
                    )
                    if cancel.is_set() or tournament.missing():
                        break
                    made = tournament.advance()
            w("")
            self._tables(tournament)
            total = len(tournament.schedule)
            w(
                f"\n{len(tournament.games)} of {total} games in "
                f"{time.monotonic() - started:.1f} s; state and games in {out}"
            )
            if cancel.is_set():
                raise CommandError(
                    f"interrupted: {len(tournament.games)} of {total} games played; "
                    f"continue with --resume --out {out}",
                    returncode=130,
                )
            if missing := tournament.missing():
                # Some games were aborted or could not start: not a finished tournament, and a
                # Swiss or a knockout cannot make its next round without them.
                waiting = (
                    ""
                    if spec.fixed or tournament.event.current_round >= spec.round_count
                    else f"; round {tournament.event.current_round + 1} waits for them"
                )
                raise CommandError(
                    f"incomplete: {missing} of {total} games were not played{waiting}; "
                    f"play them with --resume --out {out}"
                )
        finally:
            box.close()

    def _tables(self, tournament: Tournament) -> None:
        w = self.stdout.write
        event, names = tournament.event, tournament.names
        fmt = tournament.spec.format
        if fmt is Format.SWISS:
            w(swiss_table(event, names))
        elif fmt is Format.GAUNTLET:
            w(gauntlet_table(event, names))
        elif fmt is Format.KNOCKOUT:
            w(bracket_text(event, names))
        else:
            table = tournament.standings()
            w(cross_table(sorted(table, key=lambda s: s.seed)))
            w("")
            w(stats.standings_text(table))
        w("")
        w(rating_table(tournament.results(), names))

    def _tournament(self, out: Path, opts: dict[str, Any], no_sandbox: bool) -> Tournament:
        given = [cli.load_bot(b, no_sandbox=no_sandbox) for b in opts["bots"]]
        if opts["resume"]:
            saved = Tournament.load(out, trusted=True if no_sandbox else None)
            if given:
                saved.check_same(self._new(out, given, opts))
            return saved
        if len(given) < 2:
            raise CommandError("a tournament needs at least two bots")
        if opts["rounds"] is not None and opts["rounds"] < 1:
            raise CommandError("--rounds must be at least 1")
        if opts["games"] is not None and opts["games"] < 1:
            raise CommandError("--games must be at least 1")
        if (out / "tournament.json").exists():
            raise CommandError(f"{out} already holds a tournament: use --resume, or another --out")
        return self._new(out, given, opts)

    def _new(self, out: Path, bots: list[BotSpec], opts: dict[str, Any]) -> Tournament:
        fmt = Format(opts["format"])
        rounds = opts["rounds"]
        if rounds is None:
            rounds = swiss_rounds(len(bots)) if fmt is Format.SWISS else 1
        return Tournament(
            out,
            bots,
            cli.variant_name(opts["variant"]),
            cli.time_control(opts["time"]),
            rounds,
            opts["seed"],
            opts["opening_plies"],
            format=fmt.value,
            match_games=opts["games"] or DEFAULT_GAMES[fmt],
            max_tiebreaks=opts["tiebreaks"],
        )


def _describe(t: Tournament) -> str:
    spec = t.spec
    fmt = spec.format
    if fmt in (Format.ROUND_ROBIN, Format.DOUBLE_ROUND_ROBIN):
        return (
            f"{fmt}, {t.rounds} round(s), every pair {spec.per_pair} times, {spec.max_games} games"
        )
    games = f"mini-matches of {spec.games} game{'s' if spec.games > 1 else ''}"
    if fmt is Format.SWISS:
        return f"Swiss of {spec.round_count} rounds, {games}"
    if fmt is Format.GAUNTLET:
        return f"gauntlet of {t.names[0]} against each, {games}"
    return (
        f"knockout of {spec.round_count} rounds, {games}, up to {spec.max_tiebreaks} "
        "tie-break pairs, then the higher seed"
    )


def _pairings(r: Round, names: list[str]) -> str:
    """``Round 2: a - b, c - d; bye: e`` (each pairing once, its first game's White first)."""
    seen: dict[frozenset[int], tuple[int, int]] = {}
    for g in r.games:
        seen.setdefault(frozenset((g.white, g.black)), (g.white, g.black))
    pairs = ", ".join(f"{names[a]} - {names[b]}" for a, b in seen.values())
    head = f"Round {r.number}" + (f", tie-breaks {r.stage}" if r.stage else "")
    byes = "; bye: " + ", ".join(names[p] for p in r.byes) if r.byes else ""
    return f"{head}: {pairs or 'no games'}{byes}"
