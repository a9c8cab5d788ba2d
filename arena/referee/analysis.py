"""One bot asked for its action in one position: what the analysis board shows.

:func:`analyse` starts the bot in the sandbox as for a game (its ``hello`` names the variant
and the colour to move, on a short clock), sends one ``request`` for the position reached by
``history`` (the bot sees that history and the position, as in any game), takes its action
and stops it. The referee's own game loop does all of it: the history is the game's opening,
the side not to move is a stand-in that answers ``hello`` and is never asked, and the game is
stopped once the bot has answered. So an analysis fails exactly as a game would: a bot that
does not start, runs out of time, crashes, writes nonsense or answers an illegal action gets
the referee's termination and reason; only the machine's failure raises
(:class:`~arena.referee.errors.InfrastructureError`, from :meth:`Referee.launch`). A bot that
resigns in the position answers ``resign``, as it would in a game.

:func:`position` checks a history before any bot is started (a ``ValueError`` names the
first action that cannot be played, or says that the game is over).
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from arena.referee import protocol
from arena.referee.bots import BotSpec
from arena.referee.conformance import name_the_players
from arena.referee.game import GameConfig, TimeControl
from arena.referee.match import Referee
from arena.referee.redaction import info_text
from arena.referee.transport import ViolationLike

__all__ = ["Answer", "analyse", "position"]


@dataclass(frozen=True)
class Answer:
    """What a bot answered in a position.

    Attributes:
        action: its action in the official notation, ``resign`` when it resigned (see
            :attr:`resigned`), empty when it failed.
        info: the ``info`` it sent with the action (None when it sent none or too much).
        ms: how long it took to answer, in milliseconds (None for a forced pass).
        termination: the referee's termination when it failed (``time``, ``crash``,
            ``illegal-move``, ``protocol-error``, ``no-start``, ``sandbox-violation``),
            else empty.
        reason: why it failed, in public words (never its standard error); what a
            resignation or a forced pass means; else empty.
        forced: the position allowed only a pass, so the bot was not asked.
    """

    action: str = ""
    info: Any = None
    ms: float | None = None
    termination: str = ""
    reason: str = ""
    forced: bool = False

    @property
    def ok(self) -> bool:
        return bool(self.action)

    @property
    def resigned(self) -> bool:
        """It resigned in this position rather than play."""
        return self.action == "resign"

    @property
    def info_text(self) -> str:
        """Its info as a person reads it (empty without one)."""
        return info_text(self.info) if self.info is not None else ""


def position(variant: str, history: Sequence[str]) -> engine.State:
    """The position ``history`` reaches in ``variant``, checked: a ``ValueError`` for an unknown
    variant, an action that is not legal (its number, the action and why), or a game over::

        >>> position("yinsh", ["e5", "f6"]).turn.label
        'white'
        >>> position("yinsh", ["e5", "e5"])
        Traceback (most recent call last):
        ...
        ValueError: action 2 ('e5'): ...
    """
    state = engine.State(engine.variant(variant))
    for i, token in enumerate(history):
        try:
            state.play(token)
        except ValueError as e:
            raise ValueError(f"action {i + 1} ({token!r}): {e}") from None
    if state.is_over():
        raise ValueError("the game is over in this position: there is no action to ask for")
    return state


def analyse(
    referee: Referee,
    spec: BotSpec,
    variant: str,
    history: Sequence[str],
    time: TimeControl,
    *,
    seed: int = 0,
    name: str | None = None,
) -> Answer:
    """Ask the bot ``spec`` for its action in the position ``history`` reaches (see the module
    docstring). ``time`` is its clock; ``name`` is how a reason speaks of the bot (its
    manifest's name unless given). A position whose only action is a pass is answered
    ``pass`` without starting the bot.

    Raises ``ValueError`` for a history that cannot be played (:func:`position`), and the
    referee's :class:`~arena.referee.errors.InfrastructureError` when the machine cannot run
    the bot.
    """
    state = position(variant, history)
    legal = state.legal_actions()
    if len(legal) == 1 and legal[0].kind is engine.Kind.PASS:
        return Answer(action="pass", forced=True, reason="a forced pass: the only legal action")
    colour = state.turn
    config = GameConfig(
        state.variant.name, spec, spec, time, seed=seed, opening=tuple(str(a) for a in history)
    )
    answered = threading.Event()
    scratch: list[Path] = []
    bot = None
    try:
        bot = referee.launch(spec, scratch, answered)
        white, black = (bot, _Silent()) if colour is engine.Color.WHITE else (_Silent(), bot)
        result = referee.run(
            config,
            white,
            black,
            on_action=lambda _state, _action, _ms: answered.set(),
            cancel=answered,
        )
    finally:
        if bot is not None:
            with contextlib.suppress(Exception):
                bot.kill()
        for path in scratch:
            shutil.rmtree(path, ignore_errors=True)
    if result.fault is not None:
        reason = name_the_players(result.public_reason, {colour.label: name or spec.name})
        return Answer(termination=result.outcome.termination.value, reason=reason)
    moves = result.transcript.get("moves", [])
    played = moves[len(history)] if len(moves) > len(history) else None
    if not isinstance(played, dict) or played.get("color") != colour.label:
        # The game loop asks the side to move first; nothing else can end it without a fault.
        raise AssertionError(f"the analysis ended without an answer: {result.reason}")
    resigned = result.outcome.termination is engine.Termination.RESIGNATION
    return Answer(
        action=str(played["action"]),
        info=played.get("info"),
        ms=played.get("ms"),
        reason="resigns in this position" if resigned else "",
    )


class _Silent:
    """The side not to move: it answers ``hello`` with ``ready`` and is never asked anything
    (the game stops once the bot to move has answered). A transport with no process."""

    def __init__(self) -> None:
        self._ready = False

    @property
    def stderr_bytes(self) -> int:
        return 0

    @property
    def stderr_tail(self) -> str:
        return ""

    def send(self, data: bytes, deadline: float) -> None:
        self._ready = self._ready or b'"hello"' in data

    def receive(self, deadline: float) -> bytes:
        if not self._ready:  # never asked for an action: the game stops first
            raise AssertionError("the side not to move was asked for an action")
        self._ready = False
        return protocol.encode(protocol.Ready(name="analysis", version=""))

    def unsolicited(self) -> bytes:
        return b""

    def drain_stderr(self, deadline: float | None = None) -> None:
        return None

    def close_input(self) -> None:
        return None

    def wait_exit(self, deadline: float) -> int | None:
        return 0

    def poll(self) -> int | None:
        return None

    def pause(self) -> None:
        return None

    def resume(self) -> None:
        return None

    def cpu_seconds(self) -> float:
        return 0.0

    def violation(self) -> ViolationLike | None:
        return None

    def setup_failure(self) -> str | None:
        return None

    def kill(self) -> None:
        return None
