"""What the local commands (match, tournament, checkbot) share: loading bots, the sandbox,
argument checks and Ctrl-C handling. Errors become ``CommandError`` with a clear message."""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.management.base import CommandError

import engine
from arena.games import runner
from arena.referee import TimeControl, sandbox_settings
from arena.referee.bots import BotError, BotSpec
from arena.referee.build import Builder, BuildFailed
from arena.referee.library import ROOT
from arena.referee.tournament import Job

if TYPE_CHECKING:
    from arena.referee.sandbox import Sandbox

BUILTIN_BOTS = ROOT / "bots"


def load_bot(path: str, *, no_sandbox: bool = False) -> BotSpec:
    """A bot folder or file from the command line. The bots of bots/ are trusted, and so is
    every bot with ``--no-sandbox`` (the user vouches for them)."""
    try:
        resolved = Path(path).expanduser().resolve()
        builtin = resolved.is_relative_to(BUILTIN_BOTS) and resolved.parent == BUILTIN_BOTS
        return BotSpec.load(path, trusted=no_sandbox or builtin)
    except BotError as e:
        raise CommandError(str(e)) from None


def time_control(text: str) -> TimeControl:
    try:
        return TimeControl.parse(text)
    except ValueError as e:
        raise CommandError(str(e)) from None


def variant_name(text: str) -> str:
    try:
        return engine.variant(text).name
    except ValueError as e:
        raise CommandError(str(e)) from None


def require_variant(variant: str, *specs: BotSpec) -> None:
    """Refuse, before anything is played, a variant that one of the bots does not declare
    (its manifest's ``variants``); the message names the bot and what it plays."""
    try:
        for spec in specs:
            spec.require(variant)
    except BotError as e:
        raise CommandError(str(e)) from None


def make_sandbox(*, no_sandbox: bool) -> Sandbox:
    """The sandbox for local games, with the protection level described in one paragraph.

    ``--no-sandbox`` runs bots as plain processes (trusted local bots only).
    """
    from arena.referee import sandbox as sb

    limits = {
        "memory_mb": settings.BOT_MEMORY_MB,
        "max_processes": settings.BOT_MAX_PROCESSES,
        "scratch_mb": settings.BOT_SCRATCH_MB,
        "state_dir": str(settings.SANDBOX_STATE_DIR),
    }
    level = sb.ProtectionLevel.NONE if no_sandbox else None
    try:
        box = sb.Sandbox(
            sandbox_settings(level, **limits),
            level=level,
            allow_unsandboxed=no_sandbox or settings.ALLOW_UNSANDBOXED,
        )
    except (sb.SandboxUnavailable, OSError) as e:
        raise CommandError(f"the sandbox cannot start: {e}") from None
    return box


def describe_sandbox(box: Sandbox, *, no_sandbox: bool) -> str:
    if no_sandbox:
        return (
            "Sandbox: none (--no-sandbox): bots run as plain processes with your rights; "
            "use it only for bots you trust."
        )
    return f"Sandbox: protection level {box.level.value}. {box.report.describe()}"


def builder(box: Sandbox) -> Builder:
    """Builds bots in ``box`` into ``BOT_BUILD_DIR``, with the arena's build limits."""
    return Builder(box, settings.BOT_BUILD_DIR, runner.build_limits())


def build_bot(spec: BotSpec, builder: Builder, write: Callable[[str], object]) -> BotSpec:
    """``spec`` ready to run: built (or taken from the build cache) if it has a build. A failed
    build is a ``CommandError`` with the build's output."""
    if not spec.needs_build:
        return spec
    write(f"Build of {spec.label}: {spec.build}")
    try:
        built = builder.build(spec)
    except BuildFailed as e:
        output = e.log.rstrip() or "(no output)"
        raise CommandError(f"the build of {spec.label} failed: {e.reason}\n{output}") from None
    write(
        f"Build of {spec.label}: done (from the cache in {builder.cache_dir})"
        if built.cached
        else f"Build of {spec.label}: done in {built.seconds:.1f} s"
    )
    return built.spec


def built_jobs(
    jobs: Sequence[Job],
    builder: Builder,
    write: Callable[[str], object],
    ready: dict[tuple[str, bool], BotSpec] | None = None,
) -> list[Job]:
    """``jobs`` with every bot built (once each) before the first game starts. ``ready`` keeps
    the bots built across calls (a tournament's rounds), so that each is built once."""
    built: dict[tuple[str, bool], BotSpec] = {} if ready is None else ready

    def runnable(spec: BotSpec) -> BotSpec:
        key = (spec.digest, spec.trusted)
        if key not in built:
            built[key] = build_bot(spec, builder, write)
        return built[key]

    return [
        dataclasses.replace(
            job,
            config=dataclasses.replace(
                job.config, white=runnable(job.config.white), black=runnable(job.config.black)
            ),
        )
        for job in jobs
    ]


@contextlib.contextmanager
def interruptible() -> Iterator[threading.Event]:
    """An event set by the first Ctrl-C (SIGINT); a second Ctrl-C interrupts at once."""
    cancel = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()

    if threading.current_thread() is not threading.main_thread():
        yield cancel
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield cancel
    finally:
        signal.signal(signal.SIGINT, previous)
