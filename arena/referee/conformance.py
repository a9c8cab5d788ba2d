"""The conformance check a bot must pass before it plays rated games.

:func:`check_bot` plays the bot against the built-in random bot in every variant it declares
(its manifest's ``variants``: every variant unless it names some), at least once in each, colours
alternating (:func:`plan`), and reports, one line per check:

* start-up: it answers ``hello`` with ``ready`` in time, giving a name (and a version);
* play: every answer is a legal action, well-formed, in time, and it plays whole games;
* shut-down: after ``end`` it exits by itself within the grace period.

    ok    bot folder: mybot (command: python3 main.py)
    ok    start-up: ready in 41 ms as 'mybot' version '1.0'
    FAIL  game 1 (yinsh, mybot as white, 3 actions): mybot played 'z9', which is not legal (...)

The referee's reasons begin with the colour at fault (``white broke the protocol``); the report
names the bot instead (:func:`name_the_players`): its reader knows the bot, not the colour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.referee.bots import BotSpec
from arena.referee.game import GameConfig, GameResult, TimeControl
from arena.referee.match import Referee
from arena.referee.sandbox import Sandbox

__all__ = ["CheckReport", "check_bot", "name_the_players", "plan"]

RANDOM_BOT = Path(__file__).resolve().parent.parent.parent / "bots" / "random"
#: The clock of the check games: generous, so that only a real fault fails.
CHECK_TIME = TimeControl(60_000, 1_000)


@dataclass
class CheckReport:
    """The outcome of :func:`check_bot`.

    Attributes:
        ok: every check passed.
        lines: the readable report, one check per line, each marked ``ok`` or ``FAIL``.
        transcript: the transcript of the first game that failed, if any.
        stderr_tail: the tail of the bot's standard error in the last game played.
        failure: the first failure in public words (no exit code, violation or standard
            error: see ``GameResult.public_reason``), empty when every check passed.
    """

    ok: bool
    lines: list[str]
    transcript: dict[str, Any] | None
    stderr_tail: str
    failure: str = ""

    def text(self) -> str:
        return "\n".join(self.lines)


def plan(
    variants: Sequence[str], games: int, *, each_colour: bool = False
) -> list[tuple[str, str]]:
    """The games of a check: (variant, the bot's colour) for each, in the order of play.

    At least ``games`` games and at least one in each variant (with ``each_colour``, one with
    each colour in each variant); the variants take turns and the colours alternate, both
    overall and within each variant::

        >>> plan(["yinsh", "blitz"], 2)
        [('yinsh', 'white'), ('blitz', 'black')]
        >>> plan(["yinsh", "blitz"], 2, each_colour=True)
        [('yinsh', 'white'), ('blitz', 'black'), ('yinsh', 'black'), ('blitz', 'white')]
        >>> plan(["yinsh"], 3)
        [('yinsh', 'white'), ('yinsh', 'black'), ('yinsh', 'white')]
    """
    if not variants:
        raise ValueError("a check needs at least one variant")
    n = len(variants)
    total = max(games, 2 * n if each_colour else n)
    # With an even number of variants, plain alternation would give each variant one colour
    # only: shift by one at every pass through the variants.
    shift = 1 if n % 2 == 0 else 0
    return [(variants[k % n], ("white", "black")[(k + shift * (k // n)) % 2]) for k in range(total)]


def name_the_players(reason: str, names: Mapping[str, str]) -> str:
    """A referee's reason with the colour it begins with (the player it is about) replaced by
    that player's name in ``names`` (colour -> name)::

        >>> name_the_players("white ran out of time", {"white": "mybot", "black": "random"})
        'mybot ran out of time'
    """
    colour, space, rest = reason.partition(" ")
    return f"{names[colour]} {rest}" if space and colour in names else reason


def _line(ok: bool, text: str) -> str:
    return f"{'ok  ' if ok else 'FAIL'}  {text}"


def check_bot(
    spec: BotSpec,
    *,
    sandbox: Sandbox | None = None,
    variants: Sequence[str] | None = None,
    games: int = 2,
    time: TimeControl | None = None,
    referee: Referee | None = None,
    name: str | None = None,
) -> CheckReport:
    """Check that a bot speaks the protocol and plays whole games (see the module docstring).

    ``variants`` are those the bot declares unless given; ``games`` is the least number of
    games, more are played to cover every variant (:func:`plan`). ``referee`` (optional)
    supplies the referee's settings; its sandbox is ``sandbox`` when given. ``name`` is how
    the report speaks of the bot (its manifest's name unless given).
    """
    ref = referee or Referee(sandbox)
    opponent = BotSpec.load(RANDOM_BOT, trusted=True)
    lines = [_line(True, f"bot: {spec.label} (command: {' '.join(spec.command)})")]
    ok = True
    failing: dict[str, Any] | None = None
    failure = ""
    tail = ""
    started = False
    for n, (variant, color) in enumerate(plan(variants or spec.variants, max(1, games))):
        white, black = (spec, opponent) if color == "white" else (opponent, spec)
        names = {"white": white.name, "black": black.name} | {color: name or spec.name}
        config = GameConfig(variant, white, black, time or CHECK_TIME, seed=n + 1)
        result = ref.play(config)
        player = result.transcript["players"][color]
        tail = player.get("stderr_tail", "")
        if not started:
            started = True
            ready = player.get("ready")
            if ready is None:
                ok = False
                lines.append(_line(False, f"start-up: {name_the_players(result.reason, names)}"))
                failure = f"start-up: {name_the_players(result.public_reason, names)}"
                failing = result.transcript
                break
            version = f" version {ready['version']!r}" if ready["version"] else " (no version)"
            lines.append(
                _line(
                    True, f"start-up: ready in {ready['ms']:.0f} ms as {ready['name']!r}{version}"
                )
            )
        game_ok, text, public = _judge(result, color, n + 1, names, variant)
        lines.append(_line(game_ok, text))
        if not game_ok:
            ok = False
            failing = failing or result.transcript
            failure = failure or public
            continue
        if player.get("killed_after_grace"):
            ok = False
            failing = failing or result.transcript
            late = (
                f"shut-down (game {n + 1}): did not exit within {ref.end_grace_s:g} s of end "
                "and was killed"
            )
            failure = failure or late
            lines.append(_line(False, late))
        else:
            lines.append(
                _line(True, f"shut-down (game {n + 1}): exited after end ({player['exit']})")
            )
    lines.append(_line(ok, "conformance: " + ("passed" if ok else "failed")))
    return CheckReport(ok=ok, lines=lines, transcript=failing, stderr_tail=tail, failure=failure)


def _judge(
    result: GameResult, color: str, number: int, names: Mapping[str, str], variant: str
) -> tuple[bool, str, str]:
    """Whether a check game passed, its report line, and its failure in public words (the
    checked bot, playing ``color``, named by its name in ``names``)."""
    actions = len(result.record.actions)
    head = f"game {number} ({variant}, {names[color]} as {color}, {actions} actions)"
    reason, public = (name_the_players(r, names) for r in (result.reason, result.public_reason))
    if result.fault == color:
        return False, f"{head}: {reason}", f"{head}: {public}"
    if result.fault is not None:
        text = f"{head}: the random bot failed ({public}); check the host"
        return False, text, text
    text = f"{head}: {result.outcome.result.value} ({reason})"
    return True, text, text
