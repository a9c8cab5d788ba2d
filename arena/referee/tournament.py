"""Running many games: a tournament in any format, K games at once, files, interruption and resume.

:func:`run_games` plays a list of :class:`Job` (one game each) on a thread pool, writes each
finished game's record and transcript, and reports each result as it comes; setting its
``cancel`` event aborts the running games (not counted) and starts no more. The ``match`` and
``tournament`` commands are built on it.

:class:`Tournament` plays a format of :mod:`arena.referee.formats` (round robin, double round
robin, Swiss, gauntlet, knockout) between local bots: the format makes its rounds
(:meth:`Tournament.advance`), a round robin's or a gauntlet's all at once, a Swiss's or a
knockout's each once the one before is finished. A round robin of ``rounds`` rounds has every
pair meet twice per round, once with each colour and from the same opening (``plies`` ring
placements): two cycles of the one scheduler, :func:`arena.referee.schedule.round_robin`
(``games_per_pair = 2 * rounds``)::

    >>> [(p.white, p.black) for p in round_robin(3, games_per_pair=2)]
    [(1, 2), (2, 0), (0, 1), (2, 1), (0, 2), (1, 0)]

Each game's record names its round (``[Round "2"]``, a knockout's tie-break game ``2.1``).
The state (players, settings, the rounds made with their byes, finished games) is saved in
``DIR/tournament.json`` after every game, so that an interrupted tournament resumes where it
stopped.
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
from arena.referee.formats import Event, Format, FormatError, FormatSpec, Game, Round, Tie
from arena.referee.game import GameConfig, GameResult, TimeControl
from arena.referee.match import Referee, RefereeError
from arena.referee.openings import opening
from arena.referee.schedule import round_robin

__all__ = [
    "DEFAULT_GAMES",
    "STATE_FILE",
    "FinishedGame",
    "Job",
    "Tournament",
    "TournamentError",
    "bracket_text",
    "cross_table",
    "format_elo",
    "gauntlet_table",
    "rating_table",
    "round_robin",
    "run_games",
    "swiss_table",
    "write_game",
]

#: The tournament's state file inside its output folder.
STATE_FILE = "tournament.json"
# 2: games numbered by the one scheduler (arena.referee.schedule), round after circle round;
# 3: any format, with the rounds it made (games and byes) and its settings.
_STATE_VERSION = 3


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


# ----------------------------------------------------------------------------- tournaments

#: The formats of the local command, and the games of a pairing each plays unless told: a
#: round robin's pairs meet twice per round (a double round robin's twice as well: once per
#: cycle), the other formats' mini-matches are colour-reversed pairs of games.
DEFAULT_GAMES = {
    Format.ROUND_ROBIN: 2,
    Format.DOUBLE_ROUND_ROBIN: 1,
    Format.SWISS: 2,
    Format.GAUNTLET: 2,
    Format.KNOCKOUT: 2,
}


@dataclass
class Tournament:
    """A tournament's settings, rounds and finished games, saved in ``out/tournament.json``.

    ``format`` is one of :class:`arena.referee.formats.Format`. ``rounds``: a round robin's
    repetitions (every pair meets ``match_games`` times in each), a Swiss's rounds, 1 for the
    others. ``match_games``: a round robin's games per pair and round (2 by default; a double
    round robin's are doubled), the other formats' games per mini-match (0: the format's
    default, :data:`DEFAULT_GAMES`). ``max_tiebreaks``: a knockout's tie-break mini-matches
    before the decider. The players are seeded in their order.
    """

    out: Path
    players: list[BotSpec]
    variant: str
    time: TimeControl
    rounds: int
    seed: int
    #: Ring placements of each game's opening (0: the empty board).
    plies: int = 0
    games: dict[int, FinishedGame] = field(default_factory=dict)
    format: str = Format.ROUND_ROBIN.value
    match_games: int = 0
    max_tiebreaks: int = 2

    def __post_init__(self) -> None:
        engine.variant(self.variant)
        try:
            for player in self.players:
                player.require(self.variant)
        except BotError as e:
            raise TournamentError(str(e)) from None
        self.names = _unique_names(self.players)
        try:
            fmt = Format(self.format)
        except ValueError:
            known = ", ".join(f.value for f in Format)
            raise TournamentError(
                f"unknown format {self.format!r}; the formats are {known}"
            ) from None
        self.format = fmt.value
        self.match_games = self.match_games or DEFAULT_GAMES[fmt]
        if self.rounds < 1:
            raise TournamentError("a tournament needs at least one round")
        if self.rounds != 1 and fmt in (Format.GAUNTLET, Format.KNOCKOUT):
            raise TournamentError(
                f"--rounds is for round robins and a Swiss; a {fmt}'s rounds follow from its "
                "players"
            )
        try:
            self.spec = FormatSpec(
                fmt,
                len(self.players),
                self.match_games * (1 if fmt is Format.SWISS else self.rounds),
                self.rounds if fmt is Format.SWISS else None,
                self.max_tiebreaks,
            )
            self._event = Event(self.spec)
            opening(self.variant, 0, self.plies)  # refuse impossible plies before anything
        except ValueError as e:
            raise TournamentError(str(e)) from None
        #: Each game's opening, drawn when its round is made.
        self.openings: dict[int, tuple[str, ...]] = {}
        self._make()  # the first round (a round robin's or a gauntlet's every round)

    def game_seed(self, number: int) -> int:
        """The seed given to the bots in game ``number``."""
        return self.seed * 1_000_003 + number

    @property
    def schedule(self) -> list[Game]:
        """The games made so far (a round robin's or a gauntlet's are all made at once)."""
        return self.event.games

    @property
    def event(self) -> Event:
        """The format's rounds and the results of the finished games (:attr:`games`)."""
        for number, game in self.games.items():
            if self._event.results.get(number) != game.result:
                self._event.record(number, game.result)
        return self._event

    def advance(self) -> list[Round]:
        """Make the rounds that can be made now (:meth:`arena.referee.formats.Event.advance`:
        a Swiss's or a knockout's next once the games before are finished), draw their games'
        openings and save the state; return the rounds made."""
        made = self._make()
        if made:
            self.save()
        return made

    def _make(self) -> list[Round]:
        made = self.event.advance()
        for r in made:
            for g in r.games:
                # The games of a leg share the opening drawn with the seed of its first game.
                self.openings[g.number] = opening(self.variant, self.game_seed(g.leg), self.plies)
        return made

    def playing(self) -> list[Round]:
        """The rounds (or a knockout round's tie-breaks) with games still to play."""
        pending = {g.number for g in self.event.pending()}
        return [r for r in self.event.rounds if any(g.number in pending for g in r.games)]

    # ------------------------------------------------------------------------- state

    @property
    def state_path(self) -> Path:
        return self.out / STATE_FILE

    def to_json(self) -> dict[str, Any]:
        return {
            "version": _STATE_VERSION,
            "format": self.format,
            "variant": self.variant,
            "time": str(self.time),
            "rounds": self.rounds,
            "match_games": self.match_games,
            "max_tiebreaks": self.max_tiebreaks,
            "seed": self.seed,
            "plies": self.plies,
            # Kept so that a resumed run plays the very openings the first run drew.
            "openings": {str(n): " ".join(o) for n, o in sorted(self.openings.items())},
            "players": [
                {"name": n, "path": str(p.path), "digest": p.digest, "trusted": p.trusted}
                for n, p in zip(self.names, self.players, strict=True)
            ],
            # The rounds as the format made them, byes included.
            "schedule": [r.to_json() for r in self.event.rounds],
            "games": [asdict(g) for g in sorted(self.games.values(), key=lambda g: g.number)],
        }

    def save(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        _atomic_write(self.state_path, json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, out: Path, *, trusted: bool | None = None) -> Tournament:
        """Read a saved tournament; its bots must still be there, unchanged. A round robin saved
        by the version before formats (2) is read as a round robin."""
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
        if version not in (2, _STATE_VERSION):
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
            # Version 2 knew round robins only, each pair twice per round.
            format=data.get("format", Format.ROUND_ROBIN.value),
            match_games=int(data.get("match_games", 0)),
            max_tiebreaks=int(data.get("max_tiebreaks", 2)),
        )
        try:
            if "schedule" in data:
                t._event = Event(t.spec, [Round.from_json(r) for r in data["schedule"]])
            # else version 2: the whole round robin, numbered as the one scheduler numbers it,
            # which the new tournament made already
            t.games = {g.number: g for g in (FinishedGame(**g) for g in data["games"])}
            t.event.pending()  # every game counted is one the rounds made
        except (FormatError, KeyError, TypeError, ValueError) as e:
            raise TournamentError(f"{path}: its rounds cannot be read: {e}") from None
        saved = data.get("openings", {})
        t.openings = {
            g.number: (
                tuple(str(saved[str(g.number)]).split())
                if str(g.number) in saved
                else opening(t.variant, t.game_seed(g.leg), t.plies)
            )
            for g in t.event.games
        }
        return t

    def settings(self) -> tuple[str, ...]:
        return (
            self.format,
            self.variant,
            str(self.time),
            str(self.rounds),
            str(self.match_games),
            str(self.max_tiebreaks),
            str(self.seed),
            str(self.plies),
        )

    def check_same(self, other: Tournament) -> None:
        """Raise TournamentError unless ``other`` has the same players and settings."""
        mine, theirs = self.settings(), other.settings()
        if mine != theirs:
            raise TournamentError(
                "cannot resume with other settings: saved format, variant, time, rounds, games, "
                f"tie-breaks, seed, opening plies = {mine}, given {theirs}"
            )
        if [p.digest for p in self.players] != [p.digest for p in other.players]:
            raise TournamentError("cannot resume with other players (or changed bots)")

    # ------------------------------------------------------------------------- playing

    def jobs(self) -> list[Job]:
        """The games made and still to play."""
        out = []
        width = len(str(self.spec.max_games))
        for g in self.event.pending():
            white, black = self.players[g.white], self.players[g.black]
            config = GameConfig(
                self.variant,
                white,
                black,
                self.time,
                seed=self.game_seed(g.number),
                opening=self.openings[g.number],
                headers=(("Event", self.format), ("Round", g.label)),
            )
            name = (
                f"{g.number:0{width}d}-{_safe(self.names[g.white])}-vs-{_safe(self.names[g.black])}"
            )
            out.append(Job(g.number, config, name))
        return out

    def missing(self) -> int:
        """How many games made have not been played (not yet, or aborted)."""
        return len(self.event.pending())

    def add(self, game: FinishedGame) -> None:
        """Count a finished game and save the state."""
        self.games[game.number] = game
        self.save()

    # ------------------------------------------------------------------------- results

    def results(self) -> list[tuple[str, str, float]]:
        """(white, black, white's score) of every finished game, by unique player name."""
        return [
            (self.names[g.white], self.names[g.black], stats.points(result))
            for g, result in self.event.played()
        ]

    def standings(self) -> list[stats.Standing[str]]:
        """A round robin's standings after the finished games (:func:`arena.stats.standings`),
        best first, by unique player name."""
        return stats.standings(
            self.names,
            [(self.names[g.white], self.names[g.black], r, 1) for g, r in self.event.played()],
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


def swiss_table(event: Event, names: Sequence[str]) -> str:
    """A Swiss's standings (:meth:`arena.referee.formats.Event.standings`): points (a bye's
    included), games won, drawn and lost, byes, then the tie-breaks in the order they count:
    Buchholz, Sonneborn-Berger (SB), head-to-head (H2H)."""
    width = max(8, *(len(n) + 2 for n in names))
    head = (
        f"{'#':>3}  {'player'.ljust(width)}{'points':>6}{'games':>7}{'+':>4}{'=':>4}{'-':>4}"
        f"{'byes':>6}{'Buchholz':>10}{'SB':>7}{'H2H':>6}"
    )
    lines = [head]
    for s in event.standings():
        lines.append(
            f"{s.rank:>3}  {names[s.player].ljust(width)}{stats.format_points(s.points):>6}"
            f"{s.games:>7}{s.score.wins:>4}{s.score.draws:>4}{s.score.losses:>4}{s.byes:>6}"
            f"{stats.format_points(s.buchholz):>10}{s.sonneborn_berger:>7.2f}"
            f"{stats.format_points(s.head_to_head):>6}"
        )
    return "\n".join(lines)


def gauntlet_table(event: Event, names: Sequence[str]) -> str:
    """The seed's (the first player's) score against each other player, and in all."""
    seed = next(s for s in event.standings() if s.player == 0)
    width = max(10, *(len(n) + 2 for n in names))
    lines = [
        f"{names[0]} against each:",
        f"{'opponent'.ljust(width)}{'score':>8}{'+':>4}{'=':>4}{'-':>4}",
    ]
    for player in range(1, len(names)):
        score = seed.against.get(player, stats.Score())
        lines.append(
            f"{names[player].ljust(width)}"
            f"{stats.format_points(score.points) + '/' + str(score.games):>8}"
            f"{score.wins:>4}{score.draws:>4}{score.losses:>4}"
        )
    total = f"{stats.format_points(seed.points)}/{seed.games}"
    lines.append(
        f"{'in all'.ljust(width)}{total:>8}{seed.score.wins:>4}{seed.score.draws:>4}"
        f"{seed.score.losses:>4}"
    )
    return "\n".join(lines)


def bracket_text(event: Event, names: Sequence[str]) -> str:
    """A knockout's bracket as far as it is known: each round's ties with their scores (all
    games, tie-breaks included) and who went through, then the champion.

    >>> from arena.referee.formats import FormatSpec
    >>> e = Event(FormatSpec("knockout", 3, 2, max_tiebreaks=0))
    >>> for r in e.advance():
    ...     for g in r.games:
    ...         e.record(g.number, "white")
    >>> for r in e.advance():
    ...     for g in r.games:
    ...         e.record(g.number, "draw")
    >>> print(bracket_text(e, ["ann", "bob", "cy"]))
    Round 1
      ann (1)  bye
      bob (2) 1-1 cy (3): bob (decider: the higher seed)
    Round 2, the final
      ann (1) 1-1 bob (2): ann (decider: the higher seed)
    Champion: ann
    """
    rounds = event.bracket()
    last = event.spec.round_count
    lines = []
    for number, ties in enumerate(rounds, 1):
        lines.append(f"Round {number}" + (", the final" if number == last else ""))
        lines += [f"  {_tie_text(t, names)}" for t in ties]
    champion = event.champion
    lines.append(f"Champion: {names[champion]}" if champion is not None else "No champion yet")
    return "\n".join(lines)


def _tie_text(tie: Tie, names: Sequence[str]) -> str:
    def who(p: int) -> str:
        return f"{names[p]} ({p + 1})"

    if tie.low is None:
        return f"{who(tie.high)}  bye"
    high, low = (stats.format_points(x) for x in tie.points)
    text = f"{who(tie.high)} {high}-{low} {who(tie.low)}"
    if tie.tiebreaks:
        text += f" after {tie.tiebreaks} tie-break{'s' if tie.tiebreaks > 1 else ''}"
    if tie.winner is None:
        return text + ": undecided"
    text += f": {names[tie.winner]}"
    return text + (" (decider: the higher seed)" if tie.decided_by == "decider" else "")


def elapsed(since: float) -> str:
    """Seconds since a ``time.monotonic()`` value, for progress lines."""
    return f"{time.monotonic() - since:.1f} s"
