"""The referee: plays one game between two bots, safely and fairly, and says who won and why.

:class:`Referee` starts both bots (in the sandbox), talks the protocol of docs/protocol.md with
each, keeps a clock per bot, checks every action against the rules, and returns a
:class:`GameResult` with the outcome, the record and a JSON transcript. A misbehaving bot never
raises: it loses, with a termination and a one-line reason. Only an infrastructure failure (the
sandbox cannot start at all) raises :class:`RefereeError`, which a caller may retry.

The configuration and result types are in :mod:`arena.referee.game`, the sandbox settings with
the bot library in :mod:`arena.referee.library`, the words of a failure in
:mod:`arena.referee.reasons`; callers import them all from :mod:`arena.referee`.

The game loop (:meth:`Referee.run`) works on two transports; :meth:`Referee.play` launches the
bots and gives it :class:`~arena.referee.transport.PipeTransport` objects, and tests give it
scripted ones. Time rules (docs/referee.md):

* each bot has a clock, ``initial_ms`` at the start; a request is charged the wall time from
  the moment the referee starts writing it to the moment the whole answer has been read, less
  ``move_overhead_ms`` (the allowance for pipes and scheduling, per request, never negative);
* the bot loses on time when a request's charge exceeds what its clock holds;
* ``increment_ms`` is added once per turn, when the turn passes to the opponent, if the bot
  was asked at least once in that turn (a forced pass asks nothing and earns nothing).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import json
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import engine
from arena.referee import protocol
from arena.referee.bots import BotSpec
from arena.referee.errors import InfrastructureError
from arena.referee.game import GameConfig, GameResult, Played
from arena.referee.library import sandbox_settings
from arena.referee.outcomes import Failure
from arena.referee.protocol import ActionReply, ProtocolError, Ready, RequestEncoder, Resign
from arena.referee.reasons import (
    STDERR_MARK,
    stderr_summary,
    storable,
    violation_text,
    without_stderr,
)
from arena.referee.redaction import info_text
from arena.referee.sandbox import Sandbox, SandboxUnavailable
from arena.referee.transport import (
    Cancelled,
    Closed,
    LineTooLong,
    PipeTransport,
    Timeout,
    ViolationLike,
    describe_exit,
)

__all__ = [
    "GAME_STDERR_LIMIT",
    "PLY_STDERR_LIMIT",
    "REFEREE_VERSION",
    "SINGLE_FILE_PREFIX",
    "Referee",
    "RefereeError",
]

try:
    REFEREE_VERSION = importlib.metadata.version("yinsh-arena")
except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a bare checkout
    REFEREE_VERSION = "0"

#: The name of the temporary folder a single-file bot is copied to starts so (a server path
#: that no page shows: arena.games.privacy).
SINGLE_FILE_PREFIX = "yinsh-bot-"

T = engine.Termination
_WHITE, _BLACK = engine.Color.WHITE, engine.Color.BLACK
#: Largest ``info`` object kept per action (its compact JSON, in bytes), and per bot per game.
INFO_LIMIT = 2048
INFO_TOTAL_LIMIT = 256 * 1024
#: Most of a bot's info told to a watcher with one action (as text, in characters).
LIVE_INFO_CHARS = 500
#: Most of a bot's standard error kept with one action (the end of what it wrote while thinking
#: on it, in bytes), and with all its actions of a game; the whole stream's tail is kept apart.
PLY_STDERR_LIMIT = 2048
GAME_STDERR_LIMIT = 256 * 1024
#: How long the referee waits, once a bot has exited, for its standard error to reach its end
#: (every process that held it gone), so that a reason quotes the bot's last words.
STDERR_GRACE_S = 1.0


class RefereeError(InfrastructureError):
    """An infrastructure failure (the sandbox cannot start, the disk is full...): retry later."""


# ----------------------------------------------------------------------------- the loop


class Transport(Protocol):
    """What the game loop needs of a bot connection (a PipeTransport or a scripted fake)."""

    @property
    def stderr_bytes(self) -> int: ...
    @property
    def stderr_tail(self) -> str: ...
    def send(self, data: bytes, deadline: float) -> None: ...
    def receive(self, deadline: float) -> bytes: ...
    def unsolicited(self) -> bytes: ...
    def drain_stderr(self, deadline: float | None = None) -> None: ...
    def close_input(self) -> None: ...
    def wait_exit(self, deadline: float) -> int | None: ...
    def poll(self) -> int | None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...
    def cpu_seconds(self) -> float: ...
    def violation(self) -> ViolationLike | None: ...
    def setup_failure(self) -> str | None: ...
    def kill(self) -> None: ...


class _Failed(Exception):
    """A bot failed: it loses with this termination and reason. ``public`` says what happened
    without the bot's own words or its process's details (exit code, violation, what it
    wrote): what its opponent and the public are told (the reason itself when None)."""

    def __init__(
        self, color: engine.Color, termination: Failure, reason: str, public: str | None = None
    ):
        super().__init__(reason)
        self.color = color
        self.termination = termination
        self.reason = reason
        self.public = public if public is not None else reason


class _Aborted(Exception):
    pass


class _Resigned(Exception):
    """A bot resigned: its opponent wins, by the rules' ``resignation`` (no one's fault)."""

    def __init__(self, reason: str, color: engine.Color):
        super().__init__(reason)
        self.color = color


@dataclass
class _Player:
    color: engine.Color
    spec: BotSpec
    transport: Transport | None
    clock_ms: float = 0.0
    ready: Ready | None = None
    ready_ms: float | None = None
    asked: bool = False
    paused: bool = False
    exited: bool = False
    info_bytes: int = 0
    info_dropped: int = 0
    #: Bytes of its standard error already given to an action (or written before the first).
    stderr_seen: int = 0
    #: Bytes of its standard error kept with its actions.
    stderr_kept: int = 0
    end: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.color.label


class Referee:
    """Plays games between bots; one referee may play many games, from several threads.

    Args:
        sandbox: the sandbox bots run in; None makes one at the host's best protection level
            (with the engine and the bot SDK mounted read-only, see ``sandbox_settings``).
        startup_timeout_s: how long a bot has to answer ``hello`` with ``ready``.
        end_grace_s: how long a bot has to exit after ``end`` before it is killed.
        move_overhead_ms: the allowance per request for the transport (not charged).
        line_limit_bytes: the longest line a bot may write.
        pause_between_turns: freeze each bot while it is not its turn (no thinking on the
            opponent's time).
    """

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        startup_timeout_s: float = 10.0,
        end_grace_s: float = 1.0,
        move_overhead_ms: int = 50,
        line_limit_bytes: int = 64 * 1024,
        pause_between_turns: bool = True,
    ) -> None:
        self._sandbox = sandbox
        self._sandbox_lock = threading.Lock()
        self.startup_timeout_s = startup_timeout_s
        self.end_grace_s = end_grace_s
        self.move_overhead_ms = move_overhead_ms
        self.line_limit_bytes = line_limit_bytes
        self.pause_between_turns = pause_between_turns

    # ------------------------------------------------------------------------- launching

    @property
    def sandbox(self) -> Sandbox:
        """The sandbox bots run in (made on first use when none was given)."""
        with self._sandbox_lock:
            if self._sandbox is None:
                self._sandbox = Sandbox(sandbox_settings())
            return self._sandbox

    def play(
        self,
        config: GameConfig,
        *,
        on_action: Callable[[engine.State, engine.Action, float], None] | None = None,
        on_played: Callable[[Played], None] | None = None,
        cancel: threading.Event | None = None,
        connected: Mapping[engine.Color, Transport] | None = None,
        overhead_ms: Mapping[engine.Color, int] | None = None,
    ) -> GameResult:
        """Play one game: launch both bots, run the game, stop both bots, return the result.

        ``connected`` gives the sides whose bot is already connected another way (a remote
        bot, over HTTP): they are not launched, and are killed with the others at the end.
        ``overhead_ms`` gives a side an allowance per request of its own instead of
        ``move_overhead_ms`` (a remote bot's network latency).

        ``on_action(state, action, think_ms)`` is called after every action; ``on_played``
        with a :class:`Played` (the action, its think time, both clocks: public facts only)
        after every action of a bot, once its clock has been updated: what a page watching
        the game shows.

        Raises an :class:`~arena.referee.errors.InfrastructureError` when a bot cannot be
        started for a reason that is not its own: ``SandboxUnavailable`` (from the sandbox) for
        an untrusted bot on a host without an adequate sandbox, ``SlotsExhausted``, a
        ``CgroupError``, or :class:`RefereeError` for any other failure of the machine (a
        missing bot folder, a full disk). Nothing is then recorded against either bot, and
        neither bot is left running. Raises ``ValueError`` for a bad configuration (variant,
        opening).
        """
        _check_config(config)
        sandbox = self.sandbox
        given = dict(connected or {})
        transports: dict[engine.Color, Transport | None] = {_WHITE: None, _BLACK: None}
        scratch: list[Path] = []
        try:
            for color, spec in ((_WHITE, config.white), (_BLACK, config.black)):
                transports[color] = given.pop(color, None) or self.launch(spec, scratch, cancel)
            return self.run(
                config,
                transports[_WHITE],
                transports[_BLACK],
                protection=_level_name(sandbox),
                on_action=on_action,
                on_played=on_played,
                cancel=cancel,
                overhead_ms=overhead_ms,
            )
        finally:
            for t in [*transports.values(), *given.values()]:
                if t is not None:
                    with contextlib.suppress(Exception):
                        t.kill()
            for path in scratch:
                shutil.rmtree(path, ignore_errors=True)

    def launch(
        self, spec: BotSpec, scratch: list[Path], cancel: threading.Event | None = None
    ) -> PipeTransport:
        """Start one bot in the sandbox and connect to it (it has not been sent ``hello``).

        A single-file bot is copied to a folder of its own, added to ``scratch``: the caller
        removes those folders, and kills the transport, when the bot is done. Raises as
        :meth:`play` does when the bot cannot be started.
        """
        sandbox = self.sandbox
        if spec.needs_build:
            raise ValueError(f"{spec.name} must be built before it plays (arena.referee.build)")
        folder = spec.folder
        try:
            if not spec.path.is_dir():
                # A single-file bot sees its own file only, never its neighbours.
                tmp = Path(tempfile.mkdtemp(prefix=SINGLE_FILE_PREFIX))
                scratch.append(tmp)
                shutil.copy2(spec.path, tmp / spec.path.name)
                tmp.chmod(0o755)
                folder = tmp
            process = sandbox.launch(folder, list(spec.command), trusted=spec.trusted)
        except InfrastructureError:
            raise  # the sandbox's own: SandboxUnavailable, SlotsExhausted, CgroupError
        except OSError as e:  # the bot's folder is gone, the disk is full...
            raise RefereeError(f"the sandbox could not start {spec.name}: {e}") from e
        return PipeTransport(process, line_limit=self.line_limit_bytes, cancel=cancel)

    # ------------------------------------------------------------------------- the game

    def run(
        self,
        config: GameConfig,
        white: Transport | None,
        black: Transport | None,
        *,
        protection: str = "none",
        on_action: Callable[[engine.State, engine.Action, float], None] | None = None,
        on_played: Callable[[Played], None] | None = None,
        cancel: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
        launch_failures: dict[engine.Color, str] | None = None,
        overhead_ms: Mapping[engine.Color, int] | None = None,
    ) -> GameResult:
        """Run a game over two connected bots (None for a bot that could not be started).

        The transports are not killed here (the caller owns them), but both bots have been
        sent ``end`` and given ``end_grace_s`` to exit. ``overhead_ms`` replaces
        ``move_overhead_ms`` for the sides it names.
        """
        _check_config(config)
        return _Game(
            self,
            config,
            white,
            black,
            protection,
            on_action,
            cancel,
            clock,
            launch_failures or {},
            on_played,
            overhead_ms or {},
        ).run()


def _level_name(sandbox: Sandbox) -> str:
    level = getattr(sandbox, "level", None)  # a stand-in for a sandbox may have none
    return str(getattr(level, "value", level) or "unknown").lower()


def _check_config(config: GameConfig) -> None:
    v = engine.variant(config.variant)  # ValueError names the known variants
    s = engine.State(v)
    for i, token in enumerate(config.opening):
        try:
            s.play(token)
        except ValueError as e:
            raise ValueError(f"opening action {i + 1} ({token!r}): {e}") from None


class _Game:
    """One game in progress (the state of :meth:`Referee.run`)."""

    def __init__(
        self,
        referee: Referee,
        config: GameConfig,
        white: Transport | None,
        black: Transport | None,
        protection: str,
        on_action: Callable[[engine.State, engine.Action, float], None] | None,
        cancel: threading.Event | None,
        clock: Callable[[], float],
        launch_failures: dict[engine.Color, str],
        on_played: Callable[[Played], None] | None = None,
        overhead_ms: Mapping[engine.Color, int] | None = None,
    ) -> None:
        self.ref = referee
        self.config = config
        self.now = clock
        self.cancel = cancel
        self.on_action = on_action
        self.on_played = on_played
        self.protection = protection
        self.launch_failures = launch_failures
        tc = config.time
        self.players = (
            _Player(_WHITE, config.white, white, float(tc.initial_ms)),
            _Player(_BLACK, config.black, black, float(tc.initial_ms)),
        )
        self.state = engine.State(config.variant)
        self.moves: list[dict[str, Any]] = []
        self.encoder = RequestEncoder()
        self.overhead_ms = float(referee.move_overhead_ms)
        #: Each side's allowance per request (``move_overhead_ms`` unless given).
        self.overheads = {
            c: float((overhead_ms or {}).get(c, referee.move_overhead_ms)) for c in (_WHITE, _BLACK)
        }
        self.started_wall = dt.datetime.now(dt.UTC)
        self.started = clock()
        self.perf_start = time.perf_counter()

    # --------------------------------------------------------------------- top level

    def run(self) -> GameResult:
        outcome: engine.Outcome
        fault: engine.Color | None = None
        try:
            for token in self.config.opening:
                color = self.state.turn
                action = self.state.play(token)
                self.encoder.append(str(action))
                self.moves.append({"color": color.label, "action": str(action), "opening": True})
            self._start()
            self._loop()
            assert self.state.outcome is not None
            outcome = self.state.outcome
            reason = public = self._rules_reason(outcome)
        except _Failed as f:
            fault = f.color
            winner = f.color.other
            outcome = engine.Outcome(engine.Result(winner.label), f.termination)
            reason, public = f.reason, f.public
        except _BothFailed as f:
            outcome = engine.Outcome(engine.Result.DRAW, f.termination)
            reason, public = f.reason, f.public
        except _Resigned as r:
            outcome = engine.Outcome(engine.Result(r.color.other.label), T.RESIGNATION)
            reason = public = str(r)
        except (_Aborted, Cancelled):
            outcome = engine.Outcome(engine.Result.DRAW, Failure.ABORTED)
            reason = public = "the game was aborted by the referee (the result does not count)"
        aborted = outcome.termination is Failure.ABORTED
        self._finish(outcome, public, fault, aborted)
        return self._result(outcome, reason, public, fault, aborted)

    def _rules_reason(self, outcome: engine.Outcome) -> str:
        s = self.state
        w, b = s.removed
        if outcome.termination is T.ROWS:
            n = max(w, b)
            return f"{outcome.result.value} removed {n} ring{'s' if n != 1 else ''} ({w}-{b})"
        ending = outcome.termination.value
        what = {
            T.POOL_EXHAUSTED.value: "the marker pool ran out",
            T.NO_MOVES.value: "neither player could move",
        }.get(ending, ending)
        if outcome.result is engine.Result.DRAW:
            return f"{what} with rings removed equal ({w}-{b}): a draw"
        return f"{what}; {outcome.result.value} removed more rings ({w}-{b})"

    # --------------------------------------------------------------------- start-up

    def _start(self) -> None:
        hello_deadline = self.now() + self.ref.startup_timeout_s
        errors: dict[engine.Color, _Failed] = {}
        for p in self.players:
            if p.transport is None:
                why = self.launch_failures.get(p.color, "could not be started")
                errors[p.color] = _Failed(p.color, Failure.NO_START, f"{p.label} {why}")
                continue
            hello = protocol.Hello(
                variant=self.state.variant.name,
                color=p.label,
                initial_ms=self.config.time.initial_ms,
                increment_ms=self.config.time.increment_ms,
                seed=self.config.seed,
            )
            try:
                p.transport.send(protocol.encode(hello), hello_deadline)
            except (Closed, Timeout) as e:
                errors[p.color] = self._classify(p, e, starting=True)
        for p in self.players:
            if p.color in errors:
                continue
            assert p.transport is not None
            try:
                line = p.transport.receive(hello_deadline)
                reply = protocol.decode_bot_message(line, expect=Ready)
            except Cancelled:
                raise
            except (Closed, Timeout, LineTooLong, ProtocolError) as e:
                errors[p.color] = self._classify(p, e, starting=True)
                continue
            assert isinstance(reply, Ready)
            p.ready = reply
            p.ready_ms = round((self.now() - self.started) * 1000.0, 1)
        if len(errors) == 2:
            w, b = errors[_WHITE], errors[_BLACK]
            raise _BothFailed(
                w.termination,
                f"both bots failed to start: {w.reason}; {b.reason}",
                f"both bots failed to start: {w.public}; {b.public}",
            )
        if errors:
            raise next(iter(errors.values()))
        if self.ref.pause_between_turns:
            for p in self.players:
                self._pause(p)

    # --------------------------------------------------------------------- the game

    def _loop(self) -> None:
        state = self.state
        players = self.players
        cancel = self.cancel
        increment = float(self.config.time.increment_ms)
        pause = self.ref.pause_between_turns
        now = self.now
        on_action = self.on_action
        moves = self.moves
        for p in players:
            if p.transport is not None:  # what it wrote starting up belongs to no action
                p.transport.drain_stderr()
                p.stderr_seen = p.transport.stderr_bytes
        while not state.is_over():
            if cancel is not None and cancel.is_set():
                raise _Aborted()
            color = state.turn
            me = players[color]
            legal = state.legal_actions()
            if len(legal) == 1 and legal[0].kind is engine.Kind.PASS:
                state.push(legal[0])
                self.encoder.append("pass")
                moves.append({"color": me.label, "action": "pass", "forced": True})
                if on_action is not None:
                    on_action(state, legal[0], 0.0)
                self._end_turn(me, color, increment, pause)
                self._played(color, "pass", None, None)
                continue
            tokens = {str(a): a for a in legal}
            t = me.transport
            assert t is not None
            if me.paused:
                self._resume(me)
            me.asked = True
            other = players[1 - color]
            line = self.encoder.encode(
                list(tokens), state.to_json(), round(me.clock_ms), round(other.clock_ms)
            )
            overhead = self.overheads[color]
            start = now()
            deadline = start + (me.clock_ms + overhead) / 1000.0
            try:
                extra = t.unsolicited()
                if extra:
                    raise ProtocolError(
                        f"wrote {extra[:60]!r} to standard output without being asked"
                    )
                t.send(line, deadline)
                answer = t.receive(deadline)
                elapsed_ms = (now() - start) * 1000.0
                reply = protocol.decode_bot_message(answer, expect=ActionReply)
            except Cancelled:
                raise
            except (Closed, Timeout, LineTooLong, ProtocolError) as e:
                raise self._classify(me, e, starting=False, start=start) from None
            charged = elapsed_ms - overhead
            if charged > me.clock_ms:
                raise self._classify(me, Timeout("late"), starting=False, start=start)
            if charged > 0:
                me.clock_ms -= charged
            assert not isinstance(reply, Ready)
            if isinstance(reply, Resign):
                token = "resign"
            else:
                action = tokens.get(reply.action) or self._lenient(reply.action, tokens, me)
                state.push(action)
                token = str(action)
                self.encoder.append(token)
            entry: dict[str, Any] = {
                "color": me.label,
                "action": token,
                "ms": round(elapsed_ms, 2),
                "clock_ms": round(me.clock_ms),
            }
            if reply.info is not None:
                self._keep_info(me, entry, reply.info)
            self._keep_stderr(me, t, entry)
            moves.append(entry)
            if isinstance(reply, Resign):
                ply = len(state.history) + 1
                raise _Resigned(f"{me.label} resigned at ply {ply}", color)
            if on_action is not None:
                on_action(state, action, elapsed_ms)
            if state.turn is not color or state.is_over():
                self._end_turn(me, color, increment, pause)
            self._played(color, token, elapsed_ms, entry.get("info"))

    def _played(self, color: engine.Color, token: str, think_ms: float | None, info: Any) -> None:
        """Tell the watcher (``on_played``) about the action just played, the clocks and the
        bot's info (as text, :data:`LIVE_INFO_CHARS` at most) included."""
        if self.on_played is None:
            return
        white, black = self.players
        state = self.state
        self.on_played(
            Played(
                ply=len(state.history),
                color=color.label,
                action=token,
                think_ms=None if think_ms is None else round(think_ms, 2),
                clocks_ms=(round(white.clock_ms), round(black.clock_ms)),
                turn="" if state.is_over() else state.turn.label,
                info=info_text(info)[:LIVE_INFO_CHARS] if info is not None else "",
            )
        )

    def _end_turn(self, me: _Player, color: engine.Color, increment: float, pause: bool) -> None:
        if self.state.turn is color and not self.state.is_over():
            return
        if me.asked:
            me.clock_ms += increment
            me.asked = False
        if pause and not self.state.is_over() and not me.paused:
            self._pause(me)

    def _lenient(self, token: str, tokens: dict[str, engine.Action], me: _Player) -> engine.Action:
        """Accept another spelling of a legal action (upper case, row ends swapped)."""
        try:
            canonical = str(engine.Action.parse(token))
        except ValueError:
            canonical = None
        if canonical is not None and canonical in tokens:
            return tokens[canonical]
        shown = token if len(token) <= 40 else token[:37] + "..."
        phase = self.state.next.value.replace("-", " a ")
        raise _Failed(
            me.color,
            Failure.ILLEGAL_MOVE,
            f"{me.label} played {shown!r}, which is not legal here "
            f"(ply {len(self.state.history) + 1}, {me.label} must {phase})",
        )

    def _keep_info(self, me: _Player, entry: dict[str, Any], info: dict[str, Any]) -> None:
        size = len(json.dumps(info, separators=(",", ":"), ensure_ascii=False).encode())
        if size > INFO_LIMIT or me.info_bytes + size > INFO_TOTAL_LIMIT:
            me.info_dropped += 1
            entry["info_dropped"] = size
            return
        me.info_bytes += size
        entry["info"] = info

    def _keep_stderr(self, me: _Player, t: Transport, entry: dict[str, Any]) -> None:
        """Give the action the standard error its bot wrote since its last one (while thinking
        on it, mostly): the end of it, cut at a line, at most :data:`PLY_STDERR_LIMIT` bytes,
        with ``stderr_bytes`` when it was more. Nothing to do for a bot that wrote nothing."""
        t.drain_stderr()  # what it wrote before answering, which the pipe may still hold
        total = t.stderr_bytes
        new = total - me.stderr_seen
        me.stderr_seen = total
        if new <= 0:
            return
        room = min(new, PLY_STDERR_LIMIT, GAME_STDERR_LIMIT - me.stderr_kept)
        data = t.stderr_tail.encode()[-room:] if room > 0 else b""
        text = data.decode("utf-8", errors="ignore")  # a character cut at the front
        if len(data) < new:
            entry["stderr_bytes"] = new
            line_end = text.find("\n")
            if 0 <= line_end < len(text) - 1:
                text = text[line_end + 1 :]
        if text:
            me.stderr_kept += len(data)
            entry["stderr"] = text

    # --------------------------------------------------------------------- failures

    def _pause(self, p: _Player) -> None:
        if p.transport is not None and not p.paused:
            p.transport.pause()
            p.paused = True

    def _resume(self, p: _Player) -> None:
        if p.transport is not None and p.paused:
            p.transport.resume()
            p.paused = False

    def _classify(
        self, p: _Player, error: Exception, *, starting: bool, start: float | None = None
    ) -> _Failed:
        """The termination and reason for a bot's failure (its sandbox violation comes first)."""
        t = p.transport
        assert t is not None
        label = p.label
        where = "during start-up" if starting else f"at ply {len(self.state.history) + 1}"
        exited: int | None = None
        if isinstance(error, Closed | Timeout):
            grace = min(self.ref.end_grace_s, 1.0) if isinstance(error, Closed) else 0.0
            exited = t.wait_exit(self.now() + grace) if grace else t.poll()
        violation = t.violation()
        if violation is not None:
            return _Failed(
                p.color,
                Failure.SANDBOX,
                f"{label} was stopped by the sandbox: {violation_text(violation)}",
                f"{label} was stopped by the sandbox {where}",
            )
        if exited is not None:
            why = t.setup_failure()
            if why is not None:
                raise SandboxUnavailable(
                    f"the sandbox could not start {label}'s program ({p.spec.name}): {why}"
                )
        # The reason quotes the bot's last words: read its stderr to the end first (a bot that
        # exited), or at least what it wrote so far (one still running).
        t.drain_stderr(self.now() + STDERR_GRACE_S if exited is not None else None)
        stderr = stderr_summary(t.stderr_tail)
        said = f"{STDERR_MARK}{stderr}" if stderr else ""
        if isinstance(error, Closed) or exited is not None:
            p.exited = exited is not None
            how = describe_exit(exited) if exited is not None else "closed its output"
            if exited is None:
                closed = f"{label} closed its output {where}"
                return _Failed(p.color, Failure.CRASH, f"{closed}{said}", closed)
            return _Failed(
                p.color,
                Failure.CRASH,
                f"{label} exited {where} ({how}){said}",
                f"{label} exited {where}",
            )
        if isinstance(error, Timeout):
            if starting:
                silent = f"{label} sent no ready within {self.ref.startup_timeout_s:g} s"
                return _Failed(p.color, Failure.NO_START, f"{silent}{said}", silent)
            elapsed = self.now() - (start if start is not None else self.now())
            late = "answered only" if str(error) == "late" else "no answer"
            return _Failed(
                p.color,
                Failure.TIME,
                f"{label} ran out of time ({late} after {elapsed:.2f} s with "
                f"{round(p.clock_ms)} ms on its clock + {self.overheads[p.color]:g} ms allowance, "
                f"{where})",
            )
        if isinstance(error, LineTooLong):
            return _Failed(p.color, Failure.PROTOCOL, f"{label} wrote {error} {where}")
        return _Failed(
            p.color,
            Failure.PROTOCOL,
            f"{label} broke the protocol {where}: {error}",
            f"{label} broke the protocol {where}",
        )

    # --------------------------------------------------------------------- shutting down

    def _finish(
        self, outcome: engine.Outcome, public: str, fault: engine.Color | None, aborted: bool
    ) -> None:
        """Send ``end`` to the bots still running, let them exit, note how each one ended.

        A bot that ended the game by failing gets ``end`` too but no grace period: it is killed
        at once. An aborted game kills both at once. ``end`` gives the ``public`` reason, never a
        bot's standard error or failure details: the other bot (and so its owner) reads it.
        """
        live = [p for p in self.players if p.transport is not None]
        for p in live:
            t = p.transport
            assert t is not None
            p.end = {"sent_end": False}
            if aborted:
                t.kill()
                p.end["killed"] = "aborted"
                continue
            with contextlib.suppress(Exception):
                self._resume(p)
            if t.poll() is None and not p.exited:
                told = without_stderr(public)  # the public words quote no stderr; be sure
                line = protocol.encode(protocol.End(outcome.result.value, told))
                with contextlib.suppress(Closed, Timeout, Cancelled):
                    t.send(line, self.now() + min(self.ref.end_grace_s, 0.1))
                    p.end["sent_end"] = True
            t.close_input()
            if p.color == fault:
                code = t.poll()
                if code is None:
                    t.kill()
                    p.end["killed"] = "after its failure"
                    code = t.poll()
                p.end["exit"] = describe_exit(code) if code is not None else "killed"
        deadline = self.now() + self.ref.end_grace_s
        for p in live:
            t = p.transport
            assert t is not None
            if aborted or p.color == fault:
                continue
            code = t.wait_exit(deadline)
            if code is None:
                t.kill()
                p.end["killed_after_grace"] = True
                code = t.poll()
            p.end["exit"] = describe_exit(code) if code is not None else "killed"
        for p in live:
            t = p.transport
            assert t is not None
            with contextlib.suppress(Exception):
                p.end["cpu_s"] = round(t.cpu_seconds(), 3)
            with contextlib.suppress(Exception):
                t.drain_stderr(self.now() + STDERR_GRACE_S if t.poll() is not None else None)
            v = None
            with contextlib.suppress(Exception):
                v = t.violation()
            if v is not None:
                p.end["violation"] = violation_text(v)

    def _result(
        self,
        outcome: engine.Outcome,
        reason: str,
        public: str,
        fault: engine.Color | None,
        aborted: bool,
    ) -> GameResult:
        config = self.config
        headers: dict[str, str] = {
            "White": config.white.label,
            "Black": config.black.label,
            "Date": self.started_wall.strftime("%Y.%m.%d"),
            "TimeControl": str(config.time),
        }
        # The seed given to the bots and the actions played for them: with the bots, all a
        # re-run needs to reproduce the game.
        headers["Seed"] = str(config.seed)
        if config.opening:
            headers["Opening"] = " ".join(config.opening)
        headers.update(dict(config.headers))
        record = engine.Record.from_state(self.state, None if aborted else outcome, **headers)
        if aborted:
            record.outcome = None
        duration = time.perf_counter() - self.perf_start
        transcript = {
            "protocol": protocol.PROTOCOL_VERSION,
            "referee": REFEREE_VERSION,
            "variant": self.state.variant.name,
            "seed": config.seed,
            "opening": list(config.opening),
            "time_control": str(config.time),
            "time": {
                "initial_ms": config.time.initial_ms,
                "increment_ms": config.time.increment_ms,
                "move_overhead_ms": self.ref.move_overhead_ms,
            },
            "protection": self.protection,
            "started_at": self.started_wall.isoformat(timespec="seconds"),
            "duration_s": round(duration, 3),
            "headers": dict(config.headers),
            "players": {p.label: self._player_json(p) for p in self.players},
            "moves": self.moves,
            "result": None if aborted else outcome.result.value,
            "termination": outcome.termination.value,
            "reason": reason,
            "public_reason": public,
            "fault": fault.label if fault is not None else None,
        }
        reason = storable(reason)
        transcript["reason"] = reason
        transcript = storable(transcript)
        return GameResult(
            outcome=outcome,
            reason=reason,
            fault=fault.label if fault is not None else None,
            record=record,
            transcript=transcript,
            duration_s=duration,
            public_reason=storable(public),
        )

    def _player_json(self, p: _Player) -> dict[str, Any]:
        out = p.spec.to_json()
        t = p.transport
        out["ready"] = (
            {"name": p.ready.name, "version": p.ready.version, "ms": p.ready_ms}
            if p.ready is not None
            else None
        )
        out["clock_ms"] = round(p.clock_ms)
        if self.overheads[p.color] != self.overhead_ms:
            out["move_overhead_ms"] = round(self.overheads[p.color])
        out["stderr_tail"] = t.stderr_tail if t is not None else ""
        out["stderr_bytes"] = t.stderr_bytes if t is not None else 0
        if p.info_dropped:
            out["info_dropped"] = p.info_dropped
        out.update(p.end)
        return out


class _BothFailed(Exception):
    def __init__(self, termination: Failure, reason: str, public: str):
        super().__init__(reason)
        self.termination = termination
        self.reason = reason
        self.public = public
