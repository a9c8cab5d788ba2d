"""The bot library: what a bot may import inside the sandbox, and the settings that mount it.

The engine and the bot SDK (``yinshbot``) are mounted read-only at :data:`LIBRARY_INSIDE` in
the sandbox; :func:`sandbox_settings` makes ``SandboxSettings`` with them for the referee.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from arena.referee.sandbox import ProtectionLevel, SandboxSettings, probe

__all__ = ["LIBRARY_INSIDE", "ROOT", "bot_library", "library_paths", "sandbox_settings"]

#: The project's root folder (engine/ and bots/ are in it).
ROOT = Path(__file__).resolve().parent.parent.parent
#: Where the engine and the bot SDK are mounted (read-only) inside the sandbox.
LIBRARY_INSIDE = "/opt/yinsh"


def library_paths() -> tuple[tuple[str, str], ...]:
    """The host folders a bot may import from (the engine, the SDK), and where they appear."""
    return (
        (str(ROOT / "engine"), f"{LIBRARY_INSIDE}/engine"),
        (str(ROOT / "bots" / "sdk" / "yinshbot"), f"{LIBRARY_INSIDE}/yinshbot"),
    )


def bot_library(level: ProtectionLevel | str, **overrides: Any) -> dict[str, Any]:
    """``readonly_paths`` and ``env`` that make ``engine`` and ``yinshbot`` importable.

    Inside the sandbox (levels FULL and NAMESPACE) both are mounted read-only under
    :data:`LIBRARY_INSIDE`; a plain process (level NONE) imports them from the project folder.
    ``overrides`` may hold other ``readonly_paths`` and ``env`` entries to keep.
    """
    env = dict(overrides.get("env", ()))
    readonly = list(overrides.get("readonly_paths", ()))
    if ProtectionLevel(level) is ProtectionLevel.NONE:
        path = f"{ROOT}{os.pathsep}{ROOT / 'bots' / 'sdk'}"
    else:
        path = LIBRARY_INSIDE
        readonly += library_paths()
    env.setdefault("PYTHONPATH", path)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    env.setdefault("PYTHONUNBUFFERED", "1")
    return {"readonly_paths": tuple(readonly), "env": tuple(env.items())}


def sandbox_settings(
    level: ProtectionLevel | str | None = None, **overrides: Any
) -> SandboxSettings:
    """``SandboxSettings`` for running bots, with the bot library (:func:`bot_library`).

    ``level`` is the level the sandbox will run at (None: the host's best, found by probing);
    ``overrides`` are other SandboxSettings fields (``memory_mb``, ``state_dir``...).
    """
    if level is None:
        plain = {k: v for k, v in overrides.items() if k not in ("env", "readonly_paths")}
        level = probe(SandboxSettings(**plain)).level
    overrides.update(bot_library(level, **overrides))
    return SandboxSettings(**overrides)
