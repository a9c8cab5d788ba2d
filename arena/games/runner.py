"""What a worker needs to play a game: the referee, the bots unpacked, a heartbeat.

Plain glue between the models and :mod:`arena.referee`; the state transitions stay in
:mod:`arena.games.services` and :mod:`arena.bots.services`.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from django.conf import settings
from django.db import DatabaseError, connections

from arena.bots import store
from arena.bots.models import BotVersion
from arena.bots.unpack import Limits, ensure_unpacked
from arena.referee.bots import BotSpec
from arena.referee.match import GameConfig, Referee, TimeControl

log = logging.getLogger(__name__)

#: Seconds each bot may take to start (answer ``hello``) and to exit after ``end``.
STARTUP_S = 10.0
END_GRACE_S = 1.0
#: The referee's allowance per request (not charged to the bot's clock).
MOVE_OVERHEAD_MS = 50


def budget_seconds(time_control: str, *, games: int = 1) -> float:
    """The most wall time ``games`` games at this time control can take, with start-up and
    shut-down, given the move cap ``MATCH_MAX_ACTIONS``: what a task's soft time limit is.

    >>> round(budget_seconds("10+0.1"))
    142
    """
    tc = TimeControl.parse(time_control)
    actions = settings.MATCH_MAX_ACTIONS
    per_game = (
        2 * tc.initial_ms / 1000
        + actions * (tc.increment_ms + MOVE_OVERHEAD_MS) / 1000
        + 2 * (STARTUP_S + END_GRACE_S)
        + 10.0  # unpacking, database writes
    )
    return per_game * games


def time_limits(time_control: str, *, games: int = 1) -> tuple[int, int]:
    """A task's (soft, hard) time limits in seconds: the budget, and a little above it."""
    soft = int(budget_seconds(time_control, games=games)) + 1
    return soft, soft + 30


@functools.cache
def referee() -> Referee:
    """This process's referee; its sandbox is made once, at the host's best protection level,
    with the limits from the settings (``BOT_MEMORY_MB``, ``BOT_MAX_PROCESSES``...)."""
    from arena.referee.match import sandbox_settings
    from arena.referee.sandbox import Sandbox

    limits = sandbox_settings(
        memory_mb=settings.BOT_MEMORY_MB,
        max_processes=settings.BOT_MAX_PROCESSES,
        scratch_mb=settings.BOT_SCRATCH_MB,
        state_dir=str(settings.SANDBOX_STATE_DIR),
    )
    sandbox = Sandbox(limits, allow_unsandboxed=settings.ALLOW_UNSANDBOXED)
    log.info("%s", sandbox.report.describe())
    return Referee(
        sandbox,
        startup_timeout_s=STARTUP_S,
        end_grace_s=END_GRACE_S,
        move_overhead_ms=MOVE_OVERHEAD_MS,
    )


def unpack_limits() -> Limits:
    return Limits(
        max_files=settings.BOT_MAX_FILES,
        max_bytes=settings.BOT_MAX_UNPACKED_BYTES,
        max_ratio=settings.BOT_MAX_COMPRESSION_RATIO,
    )


def load_spec(version: BotVersion) -> BotSpec:
    """The version's bot, unpacked into this worker's cache (once per content hash).

    Raises ``UnpackError`` for an upload that is not a safe bot, ``StoredFileError`` when the
    stored file is missing or damaged. Loaded specs are remembered by this process while their
    folder exists (reading the manifest and hashing the files again costs about a millisecond
    per game).
    """
    cache = Path(settings.BOT_CACHE_DIR)
    key = (str(cache), version.sha256, version.kind, version.filename, version.bot.trusted)
    spec = _SPECS.get(key)
    if spec is not None and spec.path.exists():
        return spec
    spec = ensure_unpacked(
        store.path(version.sha256),
        sha256=version.sha256,
        kind=version.kind,
        filename=version.filename,
        cache=cache,
        limits=unpack_limits(),
        trusted=version.bot.trusted,
    )
    _SPECS[key] = spec
    return spec


_SPECS: dict[tuple[str, str, str, str, bool], BotSpec] = {}


def game_config(
    *,
    variant: str,
    white: BotSpec,
    black: BotSpec,
    white_label: str,
    black_label: str,
    time_control: str,
    seed: int,
    event: str,
    round_: int | None = None,
) -> GameConfig:
    headers = [("Event", event), ("Site", settings.SITE_NAME)]
    if round_ is not None:
        headers.append(("Round", str(round_)))
    headers += [("White", white_label), ("Black", black_label)]
    return GameConfig(
        variant=variant,
        white=white,
        black=black,
        time=TimeControl.parse(time_control),
        seed=seed,
        headers=tuple(headers),
    )


class Heartbeat:
    """A thread that calls ``beat()`` every ``interval`` seconds while a game runs.

    ``beat`` writes the heartbeat and returns whether this worker still owns the work (a
    guarded ``UPDATE``); when it no longer does (the sweeper gave the match to another worker,
    or a tournament was cancelled), :attr:`cancel` is set and the referee aborts the game.
    The thread uses its own database connection and closes it when done.
    """

    def __init__(self, beat: Callable[[], bool], interval: float) -> None:
        self.beat = beat
        self.interval = interval
        self.cancel = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    owned = self.beat()
                except DatabaseError as e:  # the database is away for a moment: try again
                    log.warning("heartbeat failed: %s", e)
                    continue
                if not owned:
                    log.info("lost ownership of the work: aborting the game")
                    self.cancel.set()
                    return
        finally:
            connections.close_all()
