"""What a worker needs to play a game: the referee and the bots unpacked.

Plain glue between the models and :mod:`arena.referee`; the state transitions stay in
:mod:`arena.games.services` and :mod:`arena.bots.services`, the failure policy, time limits
and heartbeats in :mod:`arena.worker`.
"""

from __future__ import annotations

import functools
import logging
from pathlib import Path

from django.conf import settings

from arena import worker
from arena.bots import store
from arena.bots.models import BotVersion
from arena.bots.unpack import Limits, ensure_unpacked
from arena.referee.bots import BotSpec
from arena.referee.build import Builder, BuildFailed, BuildLimits, Built
from arena.referee.match import GameConfig, Referee, TimeControl, sandbox_settings
from arena.referee.sandbox import Sandbox, SandboxSettings, reap

log = logging.getLogger(__name__)


@functools.cache
def referee() -> Referee:
    """This process's referee; its sandbox is made once, at the host's best protection level,
    with the limits from the settings (``BOT_MEMORY_MB``, ``BOT_MAX_PROCESSES``...)."""
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
        startup_timeout_s=worker.STARTUP_S,
        end_grace_s=worker.END_GRACE_S,
        move_overhead_ms=worker.MOVE_OVERHEAD_MS,
    )


def reap_leftovers() -> None:
    """Remove the bots and sandbox state that dead workers left on this host (see
    :func:`arena.referee.sandbox.reap`): a worker does it when it starts, the sweeper on each
    run. The slots of live workers are left alone."""
    reap(SandboxSettings(state_dir=str(settings.SANDBOX_STATE_DIR)))


def build_limits() -> BuildLimits:
    """A build's limits, from the settings (``BOT_BUILD_*``)."""
    return BuildLimits(
        seconds=settings.BOT_BUILD_SECONDS,
        memory_mb=settings.BOT_BUILD_MEMORY_MB,
        disk_mb=settings.BOT_BUILD_DISK_MB,
    )


def builder() -> Builder:
    """A builder in this process's sandbox, into ``BOT_BUILD_DIR``."""
    return Builder(referee().sandbox, settings.BOT_BUILD_DIR, build_limits())


def build(spec: BotSpec) -> Built:
    """The bot ready to run (built once per content hash); raises ``BuildFailed``."""
    return builder().build(spec)


def unpack_limits() -> Limits:
    return Limits(
        max_files=settings.BOT_MAX_FILES,
        max_bytes=settings.BOT_MAX_UNPACKED_BYTES,
        max_ratio=settings.BOT_MAX_COMPRESSION_RATIO,
    )


def load_spec(version: BotVersion) -> BotSpec:
    """The version's bot ready to play: unpacked and, if it has a build, built.

    A version plays only after its check built it; a build that fails later, on this worker,
    is the machine's failure (too busy, or a toolchain missing), never the bot's: it raises
    :class:`~arena.worker.InfrastructureError`. Otherwise as :func:`unpack_spec`.
    """
    spec = unpack_spec(version)
    try:
        return build(spec).spec
    except BuildFailed as e:
        raise worker.InfrastructureError(
            f"version {version.pk} passed its check but its build failed here: {e.reason}"
        ) from e


def unpack_spec(version: BotVersion) -> BotSpec:
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
    opening: str = "",
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
        opening=tuple(opening.split()),
        headers=tuple(headers),
    )
