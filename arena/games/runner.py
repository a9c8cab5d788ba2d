"""What a worker needs to play a game: the referee and the bots unpacked.

Plain glue between the models and :mod:`arena.referee`; the state transitions stay in
:mod:`arena.games.services` and :mod:`arena.bots.services`, the failure policy, time limits
and heartbeats in :mod:`arena.jobs`.

The worker's caches of unpacked and built bots (``BOT_CACHE_DIR``, ``BOT_BUILD_DIR``) are
evicted here (:func:`bots_in_use`, :mod:`arena.referee.cachedir`): a game or a check runs
inside ``bots_in_use()``, which holds every bot it loads in use until it ends, and first
removes the bots idle for ``BOT_CACHE_IDLE_HOURS`` (at the worker's first game, then at most
every ``BOT_CACHE_EVICT_INTERVAL_S``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from arena.bots import store
from arena.bots.models import BotVersion
from arena.bots.unpack import Limits, cache_key, ensure_unpacked
from arena.jobs import claims, policy
from arena.jobs.limits import MOVE_OVERHEAD_MS
from arena.jobs.models import ClaimedWork
from arena.jobs.policy import InfrastructureError
from arena.jobs.sidecar import Sidecar, Tended
from arena.referee import GameConfig, Referee, TimeControl, cachedir, sandbox_settings
from arena.referee.bots import BotSpec
from arena.referee.build import Builder, BuildFailed, BuildLimits, Built
from arena.referee.sandbox import Sandbox

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
        startup_timeout_s=settings.BOT_STARTUP_SECONDS,
        end_grace_s=settings.BOT_EXIT_SECONDS,
        move_overhead_ms=MOVE_OVERHEAD_MS,
    )


def build_limits() -> BuildLimits:
    """A build's limits, from the settings (``BOT_BUILD_*``)."""
    return BuildLimits(
        seconds=settings.BOT_BUILD_SECONDS,
        memory_mb=settings.BOT_BUILD_MEMORY_MB,
        disk_mb=settings.BOT_BUILD_DISK_MB,
        output_mb=settings.BOT_BUILD_OUTPUT_MB,
    )


def builder() -> Builder:
    """A builder in this process's sandbox, into ``BOT_BUILD_DIR``."""
    return Builder(referee().sandbox, settings.BOT_BUILD_DIR, build_limits())


def build(spec: BotSpec) -> Built:
    """The bot ready to run (built once per content hash); raises ``BuildFailed``."""
    if spec.needs_build:
        _use(Path(settings.BOT_BUILD_DIR), spec.digest)
    return builder().build(spec)


# ----------------------------------------------------------------------------- claimed work


@contextlib.contextmanager
def working_on(
    model: type[ClaimedWork],
    pk: int,
    attempt: int,
    what: str,
    sidecar: Sidecar,
    *,
    publish: Callable[[list[Any]], object] | None = None,
    released: str = "",
) -> Iterator[Tended]:
    """Do the work of one claim (a game, a check, a trial, an analysis) in this worker: the
    sidecar beats the claim (and ``publish``es what the work notes) every
    ``MATCH_HEARTBEAT_S``; the bots loaded stay in the caches (:func:`bots_in_use`); if the
    machine fails, the claim is given back with ``released`` before the reason
    (:func:`arena.jobs.policy.claimed`). Yields the sidecar's handle (its ``cancel``, its
    ``note``)."""

    def give_back(reason: str) -> None:
        claims.release(model, pk, attempt, released + reason)

    with (
        policy.claimed(give_back, what),
        sidecar.attach(
            what, lambda: claims.beat(model, pk, attempt), settings.MATCH_HEARTBEAT_S, publish
        ) as tended,
        bots_in_use(),
    ):
        yield tended


# ----------------------------------------------------------------------------- the caches

#: The leases of the bots loaded inside the current ``bots_in_use()`` block.
_LEASES: ContextVar[contextlib.ExitStack | None] = ContextVar("bot_leases", default=None)
_last_eviction = -float("inf")


@contextlib.contextmanager
def bots_in_use() -> Iterator[None]:
    """Run a game or a check: the bots it loads (:func:`load_spec`, :func:`unpack_spec`,
    :func:`build`) stay in this worker's caches until the block ends. Evicts idle bots
    first when it is time (:func:`evict_if_due`)."""
    evict_if_due()
    with contextlib.ExitStack() as stack:
        token = _LEASES.set(stack)
        try:
            yield
        finally:
            _LEASES.reset(token)


def _use(folder: Path, key: str) -> None:
    """Hold a cache entry in use until the current ``bots_in_use()`` block ends (outside
    one, only record its use)."""
    stack = _LEASES.get()
    if stack is None:
        with cachedir.lease(folder, key):
            return
    stack.enter_context(cachedir.lease(folder, key))


def evict_if_due() -> threading.Thread | None:
    """Start evicting from this worker's caches (:func:`evict`, in a thread of its own: a
    game need not wait for thousands of files to be deleted) if ``BOT_CACHE_EVICT_INTERVAL_S``
    has passed since this process last did (always the first time). Returns the thread."""
    global _last_eviction
    now = time.monotonic()
    if now - _last_eviction < settings.BOT_CACHE_EVICT_INTERVAL_S:
        return None
    _last_eviction = now
    thread = threading.Thread(
        target=evict, args=(Eviction.from_settings(),), name="bot-cache-eviction", daemon=True
    )
    thread.start()
    return thread


@dataclass(frozen=True)
class Eviction:
    """What an eviction looks at and removes (from the settings ``BOT_CACHE_*``)."""

    folders: tuple[Path, ...]
    idle_s: float
    max_bytes: int

    @classmethod
    def from_settings(cls) -> Eviction:
        return cls(
            folders=(Path(settings.BOT_CACHE_DIR), Path(settings.BOT_BUILD_DIR)),
            idle_s=settings.BOT_CACHE_IDLE_HOURS * 3600,
            max_bytes=int(settings.BOT_CACHE_MAX_MB * 1024 * 1024),
        )


def evict(what: Eviction | None = None) -> cachedir.EvictReport | None:
    """Remove the unpacked and built bots unused for ``BOT_CACHE_IDLE_HOURS``, then the least
    recently used beyond ``BOT_CACHE_MAX_MB``; never one in use. Never fails a game: an error
    is logged (and None returned)."""
    what = what or Eviction.from_settings()
    try:
        report = cachedir.evict(what.folders, idle_s=what.idle_s, max_bytes=what.max_bytes)
    except OSError as e:
        log.warning("evicting unused bots failed: %s", e)
        return None
    if report.removed:
        log.info(
            "evicted %d unused bots (%.1f MB); %.1f MB left in the caches",
            len(report.removed),
            report.freed_bytes / 2**20,
            report.left_bytes / 2**20,
        )
    return report


def unpack_limits() -> Limits:
    return Limits(
        max_files=settings.BOT_MAX_FILES,
        max_bytes=settings.BOT_MAX_UNPACKED_BYTES,
        max_ratio=settings.BOT_MAX_COMPRESSION_RATIO,
    )


def load_spec(version: BotVersion) -> BotSpec:
    """The version's bot ready to play: unpacked and, if it has a build, built (a remote
    bot's: :func:`remote_spec`).

    A version plays only after its check built it; a build that fails later, on this worker,
    is the machine's failure (too busy, or a toolchain missing), never the bot's: it raises
    :class:`~arena.jobs.policy.InfrastructureError`. Otherwise as :func:`unpack_spec`.
    """
    if version.bot.remote:
        return remote_spec(version)
    spec = unpack_spec(version)
    try:
        return build(spec).spec
    except BuildFailed as e:
        raise InfrastructureError(
            f"version {version.pk} passed its check but its build failed here: {e.reason}"
        ) from e


def remote_spec(version: BotVersion) -> BotSpec:
    """A remote bot's version as the referee names it: no folder, no command (its program runs
    on its owner's machine, :mod:`arena.games.remote`)."""
    return BotSpec(
        path=Path("remote"),
        name=version.bot.name,
        command=(),
        digest="",
        version=f"v{version.number}",
        variants=tuple(version.variant_names),
    )


def unpack_spec(version: BotVersion) -> BotSpec:
    """The version's bot, unpacked into this worker's cache (once per content hash).

    Raises ``UnpackError`` for an upload that is not a safe bot, ``StoredFileError`` when the
    stored file is missing or damaged. Loaded specs are remembered by this process while their
    folder exists, so that a game does not read the manifest and hash the files again.
    """
    return unpack_upload(version.sha256, version.kind, version.filename, version.bot.trusted)


def unpack_upload(sha256: str, kind: str, filename: str, trusted: bool = False) -> BotSpec:
    """An uploaded file of the bot store, unpacked as :func:`unpack_spec` does a version's."""
    cache = Path(settings.BOT_CACHE_DIR)
    _use(cache, cache_key(sha256, kind, filename))
    key = (str(cache), sha256, kind, filename, trusted)
    spec = _SPECS.get(key)
    if spec is not None and spec.path.exists():
        return spec
    spec = ensure_unpacked(
        functools.partial(store.fetch, sha256),
        sha256=sha256,
        kind=kind,
        filename=filename,
        cache=cache,
        limits=unpack_limits(),
        trusted=trusted,
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
    round_: str = "",
    opening: str = "",
) -> GameConfig:
    headers = [("Event", event), ("Site", settings.SITE_NAME)]
    if round_:
        headers.append(("Round", round_))
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
