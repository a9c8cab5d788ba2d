"""Running many games: a round-robin tournament, K games at once, files, interruption and resume.

:func:`run_games` plays a list of :class:`Job` (one game each) on a thread pool, writes each
finished game's record and transcript, and reports each result as it comes; setting its
``cancel`` event aborts the running games (not counted) and starts no more. The ``match`` and
``tournament`` commands are built on it.

:class:`Tournament` is a round-robin of ``rounds`` rounds: in each, every pair of players meets
twice, once with each colour and from the same opening (``plies`` ring placements), which is
two cycles of the one scheduler, :func:`arena.referee.schedule.round_robin`
(``games_per_pair = 2 * rounds``)::

    >>> [(p.white, p.black) for p in round_robin(3, games_per_pair=2)]
    [(1, 2), (2, 0), (0, 1), (2, 1), (0, 2), (1, 0)]

Its state (players, settings, finished games) is saved in ``DIR/tournament.json`` after every
game, so that an interrupted tournament resumes where it stopped.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import engine
from arena import stats
from arena.referee.bots import BotError, BotSpec
from arena.referee.game import GameConfig, GameResult, TimeControl
from arena.referee.match import Referee, RefereeError
from arena.referee.openings import opening
from arena.referee.schedule import Pairing, ScheduleError, round_robin

__all__ = [
    "STATE_FILE",
    "FinishedGame",
    "Job",
    "Pairing",
    "Tournament",
    "TournamentError",
    "cross_table",
    "format_elo",
    "rating_table",
    "round_robin",
    "run_games",
    "write_game",
]

#: The tournament's state file inside its output folder.
STATE_FILE = "tournament.json"
# 2: games numbered by the one scheduler (arena.referee.schedule), round after circle round.
_STATE_VERSION = 2


# ----------------------------------------------------------------------------- one game each


@dataclass(frozen=True)
class Job:
    """One game to play: its number (from 1), its configuration, its files' base name."""

    number: int
    config: GameConfig
    name: str


@dataclass
class FinishedGame:
    """What is kept of a finished game (also the tournament state's entries)."""

    number: int
    white: str
    black: str
    result: str
    termination: str
    reason: str
    fault: str | None
    duration_s: float
    record: str = ""
    transcript: str = ""

    @property
    def white_score(self) -> float:
        return stats.points(self.result)

    @property
    def score_text(self) -> str:
        return engine.Result(self.result).score


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "bot"


def write_game(out: Path, name: str, result: GameResult) -> tuple[Path, Path]:
    """Write a game's record (long notation) and its JSON transcript; return both paths."""
    out.mkdir(parents=True, exist_ok=True)
    record = out / f"{name}.txt"
    transcript = out / f"{name}.json"
    _atomic_write(record, result.record_text(long=True))
    _atomic_write(transcript, json.dumps(result.transcript, indent=1, ensure_ascii=False) + "\n")
    return record, transcript


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


Report = Callable[[Job, FinishedGame | None, GameResult | Exception], None]


def run_games(
    referee: Referee,
    jobs: Sequence[Job],
    out: Path,
    *,
    concurrency: int = 1,
    cancel: threading.Event | None = None,
    report: Report | None = None,
) -> list[FinishedGame]:
    """Play ``jobs``, ``concurrency`` at a time; write each finished game to ``out``.

    ``report(job, finished, outcome)`` is called in the calling thread as each game ends:
    ``finished`` is None for a game that does not count (aborted, or an infrastructure error,
    given as ``outcome``). Returns the games that count, in the order they finished. When
    ``cancel`` is set, running games are aborted and the others are not started (nor
    reported).
    """
    cancel = cancel or threading.Event()
    done: list[FinishedGame] = []
    pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=max(1, concurrency), thread_name_prefix="game"
    )
    try:
        futures = {pool.submit(_play_one, referee, job, out, cancel): job for job in jobs}
        pending = set(futures)
        while pending:
            finished, pending = concurrent.futures.wait(
                pending, timeout=0.2, return_when=concurrent.futures.FIRST_COMPLETED
            )
            for future in finished:
                job = futures[future]
                if future.cancelled():
                    continue
                try:
                    game, result = future.result()
                except _Skipped:
                    continue  # never started: the run was cancelled
                except (RefereeError, OSError) as e:
                    if report is not None:
                        report(job, None, e)
                    continue
                if game is not None:
                    done.append(game)
                if report is not None:
                    report(job, game, result)
            if cancel.is_set():
                for future in pending:
                    future.cancel()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return done


def _play_one(
    referee: Referee, job: Job, out: Path, cancel: threading.Event
) -> tuple[FinishedGame | None, GameResult]:
    if cancel.is_set():
        raise _Skipped()
    result = referee.play(job.config, cancel=cancel)
    if result.aborted:
        return None, result
    record, transcript = write_game(out, job.name, result)
    game = FinishedGame(
        number=job.number,
        white=job.config.white.name,
        black=job.config.black.name,
        result=result.outcome.result.value,
        termination=result.outcome.termination.value,
        reason=result.reason,
        fault=result.fault,
        duration_s=round(result.duration_s, 3),
        record=record.name,
        transcript=transcript.name,
    )
    return game, result


class _Skipped(RefereeError):
    """A game not started because the run was cancelled."""


class TournamentError(ValueError):
    """A tournament that cannot be started or resumed as asked; the message says why."""


# ----------------------------------------------------------------------------- round-robin


@dataclass
class Tournament:
    """A round-robin's settings, schedule and finished games, saved in ``out/tournament.json``."""

    out: Path
    players: list[BotSpec]
    variant: str
    time: TimeControl
    rounds: int
    seed: int
    #: Ring placements of each game's opening (0: the empty board).
    plies: int = 0
    games: dict[int, FinishedGame] = field(default_factory=dict)

    def __post_init__(self) -> None:
        engine.variant(self.variant)
        try:
            for player in self.players:
                player.require(self.variant)
        except BotError as e:
            raise TournamentError(str(e)) from None
        self.names = _unique_names(self.players)
        if self.rounds < 1:
            raise TournamentError("a tournament needs at least one round")
        try:
            self.schedule: list[Pairing] = round_robin(len(self.players), 2 * self.rounds)
        except ScheduleError as e:
            raise TournamentError(str(e)) from None
        try:
            self.openings = self._draw_openings()
        except ValueError as e:
            raise TournamentError(str(e)) from None

    def game_seed(self, number: int) -> int:
        """The seed given to the bots in game ``number``."""
        return self.seed * 1_000_003 + number

    def _draw_openings(self) -> dict[int, tuple[str, ...]]:
        """Each game's opening: the two games of a pair with the colours reversed share one,
        drawn with the seed of the first of them (:attr:`Pairing.leg`)."""
        first: dict[tuple[int, int, int], int] = {}
        for p in self.schedule:
            first.setdefault(p.leg, p.number)
        return {
            p.number: opening(self.variant, self.game_seed(first[p.leg]), self.plies)
            for p in self.schedule
        }

    # ------------------------------------------------------------------------- state

    @property
    def state_path(self) -> Path:
        return self.out / STATE_FILE

    def to_json(self) -> dict[str, Any]:
        return {
            "version": _STATE_VERSION,
            "variant": self.variant,
            "time": str(self.time),
            "rounds": self.rounds,
            "seed": self.seed,
            "plies": self.plies,
            # Kept so that a resumed run plays the very openings the first run drew.
            "openings": {str(n): " ".join(o) for n, o in sorted(self.openings.items())},
            "players": [
                {"name": n, "path": str(p.path), "digest": p.digest, "trusted": p.trusted}
                for n, p in zip(self.names, self.players, strict=True)
            ],
            "games": [asdict(g) for g in sorted(self.games.values(), key=lambda g: g.number)],
        }

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.state_path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, out: Path, *, trusted: bool | None = None) -> Tournament:
        """Read a saved tournament; its bots must still be there, unchanged."""
        path = out / STATE_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise TournamentError(f"{out}: no {STATE_FILE}; nothing to resume") from None
        except (OSError, ValueError) as e:
            raise TournamentError(f"{path}: cannot be read: {e}") from None
        version = data.get("version")
        if version == 1:
            raise TournamentError(
                f"{path} was saved by an older version of the tournament command, which "
                "numbered its games in another order: finish it with that version, or start "
                "the tournament again in another folder"
            )
        if version != _STATE_VERSION:
            raise TournamentError(f"{path}: unknown state version {version!r}")
        players = []
        for p in data["players"]:
            try:
                spec = BotSpec.load(p["path"], trusted=p["trusted"] if trusted is None else trusted)
            except BotError as e:
                raise TournamentError(f"cannot resume: {e}") from None
            if spec.digest != p["digest"]:
                raise TournamentError(
                    f"cannot resume: the bot at {p['path']} changed since the tournament began"
                )
            players.append(spec)
        t = cls(
            out,
            players,
            data["variant"],
            TimeControl.parse(data["time"]),
            int(data["rounds"]),
            int(data["seed"]),
            # A tournament saved before openings existed started every game from the empty board.
            int(data.get("plies", 0)),
        )
        saved = data.get("openings", {})
        for number in t.openings:
            if str(number) in saved:
                t.openings[number] = tuple(str(saved[str(number)]).split())
        for g in data["games"]:
            game = FinishedGame(**g)
            t.games[game.number] = game
        return t

    def check_same(self, other: Tournament) -> None:
        """Raise TournamentError unless ``other`` has the same players and settings."""
        mine = (self.variant, str(self.time), self.rounds, self.seed, self.plies)
        theirs = (other.variant, str(other.time), other.rounds, other.seed, other.plies)
        if mine != theirs:
            raise TournamentError(
                "cannot resume with other settings: saved variant, time, rounds, seed, opening "
                "plies = "
                f"{mine}, given {theirs}"
            )
        if [p.digest for p in self.players] != [p.digest for p in other.players]:
            raise TournamentError("cannot resume with other players (or changed bots)")

    # ------------------------------------------------------------------------- playing

    def jobs(self) -> list[Job]:
        """The games still to play."""
        out = []
        width = len(str(len(self.schedule)))
        for p in self.schedule:
            if p.number in self.games:
                continue
            white, black = self.players[p.white], self.players[p.black]
            config = GameConfig(
                self.variant,
                white,
                black,
                self.time,
                seed=self.game_seed(p.number),
                opening=self.openings[p.number],
                headers=(("Event", "round-robin"), ("Round", f"{p.round}.{p.number}")),
            )
            name = (
                f"{p.number:0{width}d}-{_safe(self.names[p.white])}-vs-{_safe(self.names[p.black])}"
            )
            out.append(Job(p.number, config, name))
        return out

    def missing(self) -> int:
        """How many games of the schedule have not been played (not yet, or aborted)."""
        return sum(1 for p in self.schedule if p.number not in self.games)

    def add(self, game: FinishedGame) -> None:
        """Count a finished game and save the state."""
        self.games[game.number] = game
        self.save()

    # ------------------------------------------------------------------------- results

    def results(self) -> list[tuple[str, str, float]]:
        """(white, black, white's score) of every finished game, by unique player name."""
        out = []
        for p in self.schedule:
            g = self.games.get(p.number)
            if g is not None:
                out.append((self.names[p.white], self.names[p.black], g.white_score))
        return out

    def standings(self) -> list[stats.Standing[str]]:
        """The standings after the finished games (:func:`arena.stats.standings`), best first,
        by unique player name."""
        return stats.standings(
            self.names,
            [
                (self.names[p.white], self.names[p.black], self.games[p.number].result, 1)
                for p in self.schedule
                if p.number in self.games
            ],
        )


def _unique_names(players: Sequence[BotSpec]) -> list[str]:
    names: list[str] = []
    for p in players:
        name, n = p.name, 2
        while name in names:
            name = f"{p.name}#{n}"
            n += 1
        names.append(name)
    return names


# ----------------------------------------------------------------------------- tables


def cross_table(table: Sequence[stats.Standing[str]]) -> str:
    """Points of each player (row) against each other (column), and in all, rows and columns in
    the order of the standings ``table`` (:func:`arena.stats.cross_table`).

    >>> table = stats.standings(["a", "b"], [("a", "b", "white", 1), ("b", "a", "draw", 1)])
    >>> print(cross_table(table))
    player  a       b       score
    a       x       1.5/2   1.5/2
    b       0.5/2   x       0.5/2
    """
    names = [s.player for s in table]
    width = max(8, *(len(n) + 2 for n in names))
    head = "player".ljust(width) + "".join(n.ljust(width) for n in names) + "score"
    lines = [head]
    for s, cells in stats.cross_table(table):
        row = "".join((cell or "-").ljust(width) for cell in cells)
        lines.append(f"{s.player.ljust(width)}{row}{stats.format_points(s.points)}/{s.games}")
    return "\n".join(line.rstrip() for line in lines)


def format_elo(value: float, error: float | None = None) -> str:
    """``+35 ± 80``; infinite differences and unknown errors shown as such."""
    if math.isinf(value):
        text = "+inf" if value > 0 else "-inf"
    else:
        text = f"{round(value):+d}"  # never "-0"
    if error is None:
        return text
    if math.isnan(error) or math.isinf(error):
        return f"{text} ± ?"
    return f"{text} ± {error:.0f}"


def rating_table(results: Sequence[tuple[str, str, float]], names: Sequence[str]) -> str:
    """Ratings fitted to the results (:func:`arena.stats.fit`), strongest first, mean 0."""
    ratings = stats.fit(results) if results else []
    rated = {r.name for r in ratings}
    width = max(8, *(len(n) + 2 for n in names))
    lines = ["rank  " + "player".ljust(width) + "elo          games  score"]
    for i, r in enumerate(ratings, 1):
        lines.append(
            f"{i:>4}  {r.name.ljust(width)}{format_elo(r.elo, r.error).ljust(13)}"
            f"{r.games:>5}  {r.percent:5.1f}%"
        )
    for n in names:
        if n not in rated:
            lines.append(f"   -  {n.ljust(width)}{'':13}{0:>5}      -")
    return "\n".join(lines)


def elapsed(since: float) -> str:
    """Seconds since a ``time.monotonic()`` value, for progress lines."""
    return f"{time.monotonic() - since:.1f} s"
