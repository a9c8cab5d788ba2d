"""Competition formats: who plays whom, round after round, and how the players finish.

One module for every tournament, the site's and the local command's. Players are numbered from
0 in seed order (0 is the top seed, and a gauntlet's seed). A :class:`FormatSpec` says which
format and how big; an :class:`Event` holds the rounds made so far and the results, and
:meth:`Event.advance` makes the next ones once the games before are finished::

    >>> event = Event(FormatSpec("knockout", players=3, games=2))
    >>> [r] = event.advance()
    >>> r.number, r.byes, [(g.number, g.label, g.white, g.black) for g in r.games]
    (1, (0,), [(1, '1', 1, 2), (2, '1', 2, 1)])
    >>> event.advance()  # round 1 is not finished
    []
    >>> event.record(1, "white"); event.record(2, "white")  # 1-1: level
    >>> [(g.label, g.white, g.black) for r in event.advance() for g in r.games]
    [('1.1', 1, 2), ('1.2', 2, 1)]

The formats (``docs/tournaments.md`` tells their rules to players):

* **round-robin**: every pair meets ``games`` times, by :func:`arena.referee.schedule.round_robin`
  (cycles of circle rounds, colours balanced and reversed in every other cycle); a
  **double-round-robin** plays twice as many, ``2 * games`` per pair. All the rounds are known
  at once. Players who sit out a round (an odd count) have no bye: they score nothing.
* **swiss**: ``rounds`` rounds; in each, players of equal points meet (the top half against the
  bottom half of a score group, the last ones floating down), never twice, in a mini-match of
  ``games`` games. With an odd count, one player has a bye (the points of a won mini-match).
  At most :func:`max_swiss_rounds` rounds: in that many, whatever the results, a pairing that
  repeats nobody always exists. What a Swiss guarantees, round after round: no pairing is
  repeated; each player plays once per round or has the bye; nobody has two byes, and the bye
  goes to the lowest-ranked player (by points, then seed) without one for whom the others can
  still be paired without a repeat; with an even ``games`` every player has as many Whites as
  Blacks, with an odd one every player's Whites and Blacks differ by at most one after the round
  whenever some pairing of the others without a repeat allows it (that comes before the score
  groups, after the bye).
* **gauntlet**: the seed (player 0) against each other player in turn, ``games`` games each; all
  the rounds are known at once.
* **knockout**: a bracket of mini-matches of ``games`` games (an even number: each player has
  White in half); the top seeds have byes in the first round when the count is not a power of
  two. A level mini-match goes to tie-breaks, mini-matches of two games, up to ``max_tiebreaks``
  of them; still level after those, the decider gives the tie to the higher seed.

In every format a mini-match's games alternate colours, and its games ``2k`` and ``2k + 1`` are
a *leg*: colour-reversed, they share an opening (:attr:`Game.leg`), as a round robin's games of
one pair in cycles ``2k`` and ``2k + 1`` do.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from arena import stats
from arena.referee.matching import perfect_matching, preferred_matching
from arena.referee.schedule import round_robin

__all__ = [
    "RESULTS",
    "Event",
    "Format",
    "FormatError",
    "FormatSpec",
    "Game",
    "Round",
    "Standing",
    "Tie",
    "knockout_size",
    "max_swiss_rounds",
    "swiss_rounds",
]

#: A game's result: the winner's colour or a draw (the values of ``engine.Result``).
RESULTS = ("white", "black", "draw")


class FormatError(ValueError):
    """A format that cannot be played as asked (or an event fed what it did not make); the
    message says why."""


class Format(StrEnum):
    ROUND_ROBIN = "round-robin"
    DOUBLE_ROUND_ROBIN = "double-round-robin"
    SWISS = "swiss"
    GAUNTLET = "gauntlet"
    KNOCKOUT = "knockout"


def max_swiss_rounds(players: int) -> int:
    """The most rounds a Swiss of ``players`` may have: ``m / 2``, where ``m`` is the count made
    even (the bye counts as a player), and ``m - 1`` (all of them) for up to four players.

    After ``r`` rounds each player has ``m - 1 - r`` players it has not met (the bye included);
    while that is at least ``m / 2`` a pairing with no repeat exists, whatever came before
    (Dirac's theorem: such a graph has a Hamiltonian cycle, so a perfect matching); past it,
    earlier pairings can leave none (two groups of three players who have all met the others).

    >>> [max_swiss_rounds(n) for n in (2, 3, 4, 5, 6, 7, 8, 16, 64)]
    [1, 3, 3, 3, 3, 4, 4, 8, 32]
    """
    m = players + players % 2
    return m - 1 if m <= 4 else m // 2


def swiss_rounds(players: int) -> int:
    """A Swiss's usual length: enough rounds for one player to beat all the others in a
    knockout (``⌈log2 players⌉``), within :func:`max_swiss_rounds`.

    >>> [swiss_rounds(n) for n in (2, 3, 8, 9, 64)]
    [1, 2, 3, 4, 6]
    """
    return max(1, min(math.ceil(math.log2(players)), max_swiss_rounds(players)))


def knockout_size(players: int) -> int:
    """The bracket's size: ``players`` rounded up to a power of two.

    >>> [knockout_size(n) for n in (2, 3, 5, 8)]
    [2, 4, 8, 8]
    """
    return 1 << max(0, players - 1).bit_length()


@dataclass(frozen=True)
class FormatSpec:
    """A format and its size. ``format`` may be given as text (``"swiss"``); anything that
    cannot be played raises :class:`FormatError`.

    Attributes:
        format: the :class:`Format`.
        players: how many (at least two).
        games: round robins: games per pair (a double round robin plays twice that); the
            other formats: games of each mini-match (a knockout's even).
        rounds: a Swiss's rounds (1 to :func:`max_swiss_rounds`); None for the others, whose
            rounds follow from the players (:attr:`round_count`).
        max_tiebreaks: a knockout's tie-break mini-matches (of two games) in a tie before the
            decider; ignored by the other formats.
    """

    format: Format
    players: int
    games: int = 1
    rounds: int | None = None
    max_tiebreaks: int = 2

    def __post_init__(self) -> None:
        try:
            fmt = Format(self.format)
        except ValueError:
            known = ", ".join(f.value for f in Format)
            raise FormatError(f"unknown format {self.format!r}; the formats are {known}") from None
        object.__setattr__(self, "format", fmt)
        n, g = self.players, self.games
        if n < 2:
            raise FormatError(f"a {fmt} needs at least two players, not {n}")
        if g < 1:
            raise FormatError(f"a {fmt} needs at least one game per pairing, not {g}")
        if fmt is Format.KNOCKOUT and g % 2:
            raise FormatError(
                f"a knockout mini-match needs an even number of games (each player has White "
                f"in half of them), not {g}"
            )
        if self.max_tiebreaks < 0:
            raise FormatError(f"max_tiebreaks cannot be negative ({self.max_tiebreaks})")
        if fmt is Format.SWISS:
            most = max_swiss_rounds(n)
            if self.rounds is None or self.rounds < 1:
                raise FormatError(f"a Swiss needs 1 to {most} rounds, not {self.rounds}")
            if self.rounds > most:
                raise FormatError(
                    f"a Swiss of {n} players can have at most {most} rounds (beyond that, "
                    f"earlier pairings can leave no round without a repeat); {self.rounds} "
                    "asked (a round robin plays everyone)"
                )
        elif self.rounds is not None:
            raise FormatError(
                f"only a Swiss is given its number of rounds; a {fmt} of {n} players plays "
                f"{self.round_count}"
            )

    @property
    def per_pair(self) -> int:
        """A round robin's games per pair (twice ``games`` in a double round robin)."""
        return 2 * self.games if self.format is Format.DOUBLE_ROUND_ROBIN else self.games

    @property
    def round_count(self) -> int:
        """The rounds it plays (a knockout's tie-breaks belong to their round)."""
        n = self.players
        if self.format is Format.SWISS:
            return self.rounds or 0
        if self.format is Format.GAUNTLET:
            return n - 1
        if self.format is Format.KNOCKOUT:
            return knockout_size(n).bit_length() - 1
        return (n - 1 + n % 2) * self.per_pair

    @property
    def max_games(self) -> int:
        """The most games it can take (exact but for a knockout, whose tie-breaks may not all
        be needed)."""
        n, g = self.players, self.games
        if self.format is Format.SWISS:
            return (self.rounds or 0) * (n // 2) * g
        if self.format is Format.GAUNTLET:
            return (n - 1) * g
        if self.format is Format.KNOCKOUT:
            return (n - 1) * (g + 2 * self.max_tiebreaks)
        return n * (n - 1) // 2 * self.per_pair

    @property
    def fixed(self) -> bool:
        """Whether all its games are known before the first is played (round robins,
        gauntlet), rather than paired from results (Swiss, knockout)."""
        return self.format not in (Format.SWISS, Format.KNOCKOUT)


@dataclass(frozen=True)
class Game:
    """One game: its number in the event (from 1, in the order made), its round (from 1), the
    players with White and Black, and for a knockout's tie-break game its number in the tie's
    tie-breaks (from 1; 0 for every other game). ``leg`` is the number of the first game of its
    leg: games of one leg share an opening."""

    number: int
    round: int
    white: int
    black: int
    tiebreak: int = 0
    leg: int = 0

    @property
    def label(self) -> str:
        """Its round as records name it: ``3``, or ``3.2`` for the second tie-break game of a
        tie of round 3."""
        return f"{self.round}.{self.tiebreak}" if self.tiebreak else str(self.round)


@dataclass(frozen=True)
class Round:
    """What one step of a format made: games of round ``number`` (all playable at once), and
    the players with a bye in it. A knockout's tie-breaks come as further steps of their round,
    ``stage`` 1, 2... (0 for a round's own games)."""

    number: int
    games: tuple[Game, ...]
    byes: tuple[int, ...] = ()
    stage: int = 0

    def to_json(self) -> dict[str, Any]:
        """A JSON-able form (:meth:`from_json` reads it back)."""
        return {
            "number": self.number,
            "stage": self.stage,
            "byes": list(self.byes),
            "games": [[g.number, g.white, g.black, g.tiebreak, g.leg] for g in self.games],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Round:
        number = int(data["number"])
        games = tuple(
            Game(int(n), number, int(w), int(b), int(t), int(leg))
            for n, w, b, t, leg in data["games"]
        )
        return cls(number, games, tuple(int(p) for p in data["byes"]), int(data["stage"]))


@dataclass
class Standing:
    """A player's line of the table: its games' score, its byes and the tie-break values.

    ``buchholz`` adds up the points of the opponents it met (each once; a bye adds nothing);
    ``sonneborn_berger`` adds up, over its opponents, its share of the points against each
    (points over games) times that opponent's points; ``head_to_head`` is the points it scored
    against the players level with it on points, Buchholz and Sonneborn-Berger.
    ``round_reached`` is, in a knockout, the last round it played in (one more for the
    champion)."""

    player: int
    score: stats.Score = field(default_factory=stats.Score)
    byes: int = 0
    bye_points: float = 0.0
    buchholz: float = 0.0
    sonneborn_berger: float = 0.0
    head_to_head: float = 0.0
    round_reached: int = 0
    rank: int = 0
    against: dict[int, stats.Score] = field(default_factory=dict)

    @property
    def points(self) -> float:
        """Its games' points and its byes'."""
        return self.score.points + self.bye_points

    @property
    def games(self) -> int:
        return self.score.games


@dataclass(frozen=True)
class Tie:
    """A knockout pairing: the higher seed, the lower one (None: a bye), its games (tie-breaks
    included), each one's points in them, the tie-break mini-matches made, the winner (None
    until decided) and what decided it: ``bye``, ``games``, ``tie-break``, ``decider`` (the
    higher seed, after ``max_tiebreaks`` level tie-breaks), ``""`` while undecided."""

    round: int
    high: int
    low: int | None
    games: tuple[Game, ...] = ()
    points: tuple[float, float] = (0.0, 0.0)
    tiebreaks: int = 0
    winner: int | None = None
    decided_by: str = ""


# A game before it is numbered: round, white, black, tie-break number, leg key.
_Draft = tuple[int, int, int, int, Hashable]
_DraftRound = tuple[int, int, list[_Draft], tuple[int, ...]]  # number, stage, games, byes


class Event:
    """A format being played: the rounds made so far and the results of their games.

    ``rounds`` and ``results`` (game number to ``"white"``, ``"black"`` or ``"draw"``) restore
    a saved event: the rounds as :meth:`advance` made them, byes included.
    """

    def __init__(
        self,
        spec: FormatSpec,
        rounds: Iterable[Round] = (),
        results: Mapping[int, str] | None = None,
    ) -> None:
        self.spec = spec
        self.rounds: list[Round] = list(rounds)
        self._games = {g.number: g for r in self.rounds for g in r.games}
        if sorted(self._games) != list(range(1, len(self._games) + 1)):
            raise FormatError("the rounds' games are not numbered 1, 2, 3... once each")
        for g in self._games.values():
            if not (0 <= g.white < spec.players and 0 <= g.black < spec.players):
                raise FormatError(f"game {g.number} names a player the event does not have")
        self.results: dict[int, str] = {}
        for number, result in (results or {}).items():
            self.record(int(number), result)

    # ------------------------------------------------------------------------- games

    @property
    def games(self) -> list[Game]:
        """Every game made, in order."""
        return [self._games[n] for n in sorted(self._games)]

    def game(self, number: int) -> Game:
        try:
            return self._games[number]
        except KeyError:
            raise FormatError(f"the event has no game {number}") from None

    def record(self, number: int, result: str) -> None:
        """Note the result of game ``number`` (again: replaces it)."""
        self.game(number)
        if result not in RESULTS:
            raise FormatError(f"a result is white, black or draw, not {result!r}")
        self.results[number] = result

    def pending(self) -> list[Game]:
        """The games made whose result is not known yet."""
        return [g for g in self.games if g.number not in self.results]

    def played(self) -> list[tuple[Game, str]]:
        """The finished games with their results, in order."""
        return [(g, self.results[g.number]) for g in self.games if g.number in self.results]

    def byes(self) -> dict[int, list[int]]:
        """Each player's byes: the rounds in which it had one."""
        out: dict[int, list[int]] = defaultdict(list)
        for r in self.rounds:
            for p in r.byes:
                out[p].append(r.number)
        return dict(out)

    # ------------------------------------------------------------------------- rounds

    def advance(self) -> list[Round]:
        """Make the rounds that can be made now and return them: all of them at once for round
        robins and gauntlets, a Swiss's or a knockout's next round (or a knockout round's
        tie-breaks) once every game made is finished; ``[]`` while games are pending and once
        the event is over."""
        if self.pending():
            return []
        fmt = self.spec.format
        if fmt is Format.SWISS:
            drafts = _swiss_next(self)
        elif fmt is Format.KNOCKOUT:
            drafts = _knockout_next(self)
        elif self.rounds:
            drafts = []
        elif fmt is Format.GAUNTLET:
            drafts = _gauntlet(self.spec)
        else:
            drafts = _round_robin(self.spec)
        made = []
        legs: dict[Hashable, int] = {}
        for number, stage, drafted, byes in drafts:
            games = []
            for rnd, white, black, tiebreak, key in drafted:
                n = len(self._games) + 1
                game = Game(n, rnd, white, black, tiebreak, legs.setdefault(key, n))
                self._games[n] = game
                games.append(game)
            made.append(Round(number, tuple(games), byes, stage))
        self.rounds.extend(made)
        return made

    @property
    def finished(self) -> bool:
        """Whether every game is played and no round is left to make."""
        if self.pending():
            return False
        if self.spec.format is Format.KNOCKOUT:
            return self.champion is not None
        if self.spec.format is Format.SWISS:
            return sum(1 for r in self.rounds if r.stage == 0) == self.spec.round_count
        return bool(self.rounds)

    @property
    def current_round(self) -> int:
        """The number of the last round made (0 before the first)."""
        return max((r.number for r in self.rounds), default=0)

    # ------------------------------------------------------------------------- tables

    def standings(self) -> list[Standing]:
        """The table after the finished games, best first, ranks from 1.

        Round robins: points, Sonneborn-Berger, wins, seed (as :func:`arena.stats.standings`);
        a Swiss: points, Buchholz, Sonneborn-Berger, head-to-head, seed; a gauntlet: points,
        seed; a knockout: the round reached (the champion first), then seed.
        """
        rows = _tally(self)
        fmt = self.spec.format
        if fmt is Format.SWISS:

            def key(s: Standing) -> tuple[float, ...]:
                return (-s.points, -s.buchholz, -s.sonneborn_berger, -s.head_to_head, s.player)

        elif fmt is Format.KNOCKOUT:
            for tie in (t for r in self.bracket() for t in r):
                for p in (tie.high, tie.low):
                    if p is not None:
                        rows[p].round_reached = max(rows[p].round_reached, tie.round)
            if (champion := self.champion) is not None:
                rows[champion].round_reached = self.spec.round_count + 1

            def key(s: Standing) -> tuple[float, ...]:
                return (-s.round_reached, s.player)

        elif fmt is Format.GAUNTLET:

            def key(s: Standing) -> tuple[float, ...]:
                return (-s.points, s.player)

        else:

            def key(s: Standing) -> tuple[float, ...]:
                return (-s.points, -s.sonneborn_berger, -s.score.wins, s.player)

        table = sorted(rows, key=key)
        for rank, s in enumerate(table, 1):
            s.rank = rank
        return table

    def bracket(self) -> list[list[Tie]]:
        """A knockout's ties, round by round, as far as they are known: each round's ties in
        bracket order (the winners of ties ``2j`` and ``2j + 1`` meet in the next round)."""
        if self.spec.format is not Format.KNOCKOUT:
            raise FormatError(f"a {self.spec.format} has no bracket")
        return _knockout_bracket(self)

    @property
    def champion(self) -> int | None:
        """A knockout's winner, once decided."""
        if self.spec.format is not Format.KNOCKOUT:
            return None
        rounds = self.bracket()
        if len(rounds) == self.spec.round_count and rounds[-1][0].winner is not None:
            return rounds[-1][0].winner
        return None


def _tally(event: Event) -> list[Standing]:
    """Every player's standing, unsorted: score, byes, Buchholz, Sonneborn-Berger and
    head-to-head."""
    spec = event.spec
    rows = [Standing(p) for p in range(spec.players)]
    for g, result in event.played():
        for me, other, side in ((g.white, g.black, "white"), (g.black, g.white, "black")):
            rows[me].score.add(result, side)
            rows[me].against.setdefault(other, stats.Score()).add(result, side)
    for player, rounds in event.byes().items():
        rows[player].byes = len(rounds)
        rows[player].bye_points = float(len(rounds) * spec.games)
    for s in rows:
        s.buchholz = sum(rows[o].points for o in s.against)
        s.sonneborn_berger = sum(
            score.points / score.games * rows[o].points
            for o, score in s.against.items()
            if score.games
        )
    level: dict[tuple[float, float, float], set[int]] = defaultdict(set)
    for s in rows:
        level[s.points, s.buchholz, s.sonneborn_berger].add(s.player)
    for s in rows:
        tied = level[s.points, s.buchholz, s.sonneborn_berger]
        s.head_to_head = sum(score.points for o, score in s.against.items() if o in tied)
    return rows


# ----------------------------------------------------------------------------- fixed schedules


def _round_robin(spec: FormatSpec) -> list[_DraftRound]:
    """The one scheduler's rounds (:func:`arena.referee.schedule.round_robin`), numbered as it
    numbers them."""
    by_round: dict[int, list[_Draft]] = defaultdict(list)
    for p in round_robin(spec.players, spec.per_pair):
        by_round[p.round].append((p.round, p.white, p.black, 0, p.leg))
    return [(r, 0, games, ()) for r, games in sorted(by_round.items())]


def _mini_match(rnd: int, first: int, second: int, games: int, key: Hashable) -> list[_Draft]:
    """``games`` games of ``first`` against ``second``, ``first`` White in the first and the
    colours alternating; games ``2k`` and ``2k + 1`` are a leg."""
    out: list[_Draft] = []
    for k in range(games):
        white, black = (first, second) if k % 2 == 0 else (second, first)
        out.append((rnd, white, black, 0, (key, k // 2)))
    return out


def _gauntlet(spec: FormatSpec) -> list[_DraftRound]:
    """Round ``i``: the seed against player ``i``; the seed has White first in odd rounds."""
    out: list[_DraftRound] = []
    for i in range(1, spec.players):
        first, second = (0, i) if i % 2 else (i, 0)
        out.append((i, 0, _mini_match(i, first, second, spec.games, i), ()))
    return out


# ----------------------------------------------------------------------------- Swiss

_BYE = -1


def _swiss_next(event: Event) -> list[_DraftRound]:
    spec = event.spec
    made = sum(1 for r in event.rounds if r.stage == 0)
    if made >= spec.round_count:
        return []
    number = made + 1
    rows = _tally(event)
    points = [s.points for s in rows]
    met = [set(s.against) for s in rows]
    had_bye = {p for p, rounds in event.byes().items() if rounds}
    diff = [0] * spec.players  # Whites minus Blacks
    first_white: dict[int, list[bool]] = defaultdict(list)  # per round played: White first?
    for r in event.rounds:
        seen: set[int] = set()
        for g in r.games:
            diff[g.white] += 1
            diff[g.black] -= 1
            for p, white in ((g.white, True), (g.black, False)):
                if p not in seen:
                    seen.add(p)
                    first_white[p].append(white)
    ranking = sorted(range(spec.players), key=lambda p: (-points[p], p))

    def no_repeat(a: int, b: int) -> bool:
        if _BYE in (a, b):
            return max(a, b) not in had_bye
        return b not in met[a]

    byes: tuple[int, ...] = ()
    players = ranking
    if spec.players % 2:
        # The bye: the lowest-ranked player without one that leaves the others pairable.
        for candidate in reversed(ranking):
            if candidate in had_bye:
                continue
            rest = [p for p in ranking if p != candidate]
            if perfect_matching(rest, no_repeat) is not None:
                byes = (candidate,)
                players = rest
                break
        else:
            raise FormatError(f"round {number} of the Swiss cannot be paired without a repeat")
    position = {p: i for i, p in enumerate(players)}
    group_size: dict[float, int] = defaultdict(int)
    for p in players:
        group_size[points[p]] += 1

    def preferences(p: int) -> list[int]:
        # Nearest in points, then (inside a score group) the player half the group further
        # down: the top half meets the bottom half.
        half = group_size[points[p]] // 2
        return sorted(
            (c for c in players if c != p),
            key=lambda c: (
                abs(points[p] - points[c]),
                abs(position[c] - position[p] - half),
                position[c],
            ),
        )

    def balanced(a: int, b: int) -> bool:
        # An odd mini-match gives one of them a White more: can both stay within one?
        da, db = diff[a], diff[b]
        return (abs(da + 1) <= 1 and abs(db - 1) <= 1) or (abs(da - 1) <= 1 and abs(db + 1) <= 1)

    pairs = None
    if spec.games % 2:
        pairs = preferred_matching(
            players, lambda a, b: no_repeat(a, b) and balanced(a, b), preferences
        )
    if pairs is None:
        pairs = preferred_matching(players, no_repeat, preferences)
    if pairs is None:  # pragma: no cover - max_swiss_rounds rules it out
        raise FormatError(f"round {number} of the Swiss cannot be paired without a repeat")

    def white_first(a: int, b: int, board: int) -> tuple[int, int]:
        """(first White, first Black) of the pair on ``board`` (from 0), ``a`` the
        higher-ranked."""
        if spec.games % 2:
            spread_a = max(abs(diff[a] + 1), abs(diff[b] - 1))
            spread_b = max(abs(diff[a] - 1), abs(diff[b] + 1))
            if spread_a != spread_b:
                return (a, b) if spread_a < spread_b else (b, a)
        if diff[a] != diff[b]:
            return (a, b) if diff[a] < diff[b] else (b, a)
        last_a, last_b = first_white[a][-1:], first_white[b][-1:]
        if last_a and last_b and last_a != last_b:  # alternate: who started Black starts White
            return (b, a) if last_a[0] else (a, b)
        return (a, b) if (number + board) % 2 else (b, a)  # from board to board, round to round

    boards = sorted(
        (tuple(sorted(pair, key=position.__getitem__)) for pair in pairs),
        key=lambda pair: position[pair[0]],
    )
    games: list[_Draft] = []
    for board, (a, b) in enumerate(boards):
        first, second = white_first(a, b, board)
        games += _mini_match(number, first, second, spec.games, (number, board))
    return [(number, 0, games, byes)]


# ----------------------------------------------------------------------------- knockout


def _bracket_order(size: int) -> list[int]:
    """Seeds (from 0) in bracket order: neighbours meet in round 1, and seeds 0 and 1 can meet
    only in the final (``[0, 3, 1, 2]`` for four)."""
    order = [0]
    while len(order) < size:
        m = 2 * len(order)
        order = [x for s in order for x in (s, m - 1 - s)]
    return order


def _knockout_bracket(event: Event) -> list[list[Tie]]:
    spec = event.spec
    order = _bracket_order(knockout_size(spec.players))
    games_of: dict[tuple[int, frozenset[int]], list[Game]] = defaultdict(list)
    for g in event.games:
        games_of[g.round, frozenset((g.white, g.black))].append(g)
    rounds: list[list[Tie]] = []
    entrants: list[tuple[int, int | None]] = []
    for i in range(0, len(order), 2):
        a, b = order[i], order[i + 1]
        entrants.append((a, b if b < spec.players else None))
    made = {r.number for r in event.rounds}
    for number in range(1, spec.round_count + 1):
        if number not in made:
            break
        ties = [
            _tie(event, number, high, low, games_of.get((number, frozenset((high, low))), []))
            if low is not None
            else Tie(number, high, None, winner=high, decided_by="bye")
            for high, low in entrants
        ]
        rounds.append(ties)
        winners = [t.winner for t in ties]
        if any(w is None for w in winners) or len(winners) < 2:
            break
        entrants = [
            (min(a, b), max(a, b))
            for a, b in zip(winners[::2], winners[1::2], strict=True)
            if a is not None and b is not None
        ]
    return rounds


def _tie(event: Event, number: int, high: int, low: int, games: list[Game]) -> Tie:
    """A tie's state from its games: decided by its games, by a tie-break mini-match that is
    not level, or by the decider once ``max_tiebreaks`` of them were level."""
    spec = event.spec

    def points(of: list[Game]) -> tuple[float, float] | None:
        if any(g.number not in event.results for g in of):
            return None
        h = sum(
            stats.points(event.results[g.number], "white" if g.white == high else "black")
            for g in of
        )
        return h, len(of) - h

    main = [g for g in games if not g.tiebreak]
    stages = max((g.tiebreak + 1) // 2 for g in games) if games else 0
    score = points(games) or (0.0, 0.0)
    tie = Tie(number, high, low, tuple(games), score, stages)
    done = points(main)
    if not main or done is None:
        return tie
    if done[0] != done[1]:
        return _decided(tie, high if done[0] > done[1] else low, "games")
    for stage in range(1, stages + 1):
        of = [g for g in games if (g.tiebreak + 1) // 2 == stage]
        result = points(of)
        if result is None:
            return tie
        if result[0] != result[1]:
            return _decided(tie, high if result[0] > result[1] else low, "tie-break")
    if stages >= spec.max_tiebreaks:
        return _decided(tie, high, "decider")
    return tie


def _decided(tie: Tie, winner: int, by: str) -> Tie:
    return Tie(tie.round, tie.high, tie.low, tie.games, tie.points, tie.tiebreaks, winner, by)


def _knockout_next(event: Event) -> list[_DraftRound]:
    spec = event.spec
    bracket = _knockout_bracket(event)
    if not bracket:
        return [_knockout_round(event, 1, _first_round(spec))]
    number = len(bracket)
    last = bracket[-1]
    undecided = [t for t in last if t.winner is None]
    if undecided:
        # Level: a tie-break mini-match of two games, the higher seed White first.
        games: list[_Draft] = []
        for i, t in enumerate(last):
            if t.winner is None and t.low is not None:
                k = 2 * t.tiebreaks + 1
                key = (number, i, "tie-break", t.tiebreaks + 1)
                games += [(number, t.high, t.low, k, key), (number, t.low, t.high, k + 1, key)]
        return [(number, max(t.tiebreaks for t in undecided) + 1, games, ())]
    if number >= spec.round_count:
        return []
    winners = [t.winner for t in last if t.winner is not None]
    pairs = [(min(a, b), max(a, b)) for a, b in zip(winners[::2], winners[1::2], strict=True)]
    return [_knockout_round(event, number + 1, pairs)]


def _first_round(spec: FormatSpec) -> list[tuple[int, int | None]]:
    order = _bracket_order(knockout_size(spec.players))
    return [
        (order[i], order[i + 1] if order[i + 1] < spec.players else None)
        for i in range(0, len(order), 2)
    ]


def _knockout_round(
    event: Event, number: int, pairs: Sequence[tuple[int, int | None]]
) -> _DraftRound:
    games: list[_Draft] = []
    byes = []
    for i, (high, low) in enumerate(pairs):
        if low is None:
            byes.append(high)
        else:
            games += _mini_match(number, high, low, event.spec.games, (number, i))
    return (number, 0, games, tuple(byes))
