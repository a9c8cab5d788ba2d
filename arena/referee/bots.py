"""What a bot is on disk: a folder with a ``bot.toml`` manifest, or a single executable file.

A bot folder holds a manifest::

    name = "random"                 # required: how the bot is shown
    command = "python3 main.py"     # required: run inside the folder (split like a shell would)
    version = "1.0"                 # optional
    author = "..."                  # optional
    description = "..."             # optional
    build = "cc -O2 -o bot main.c"  # optional: a shell command run once per version, sandboxed
    variants = ["yinsh", "blitz"]   # optional: the variants it plays (default: every variant)

A single executable file is a bot too: its name is the file's name and its command
``./FILE``. :meth:`BotSpec.load` reads either, and raises :class:`BotError` with a clear
message for anything that cannot be a bot.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import VARIANTS

__all__ = ["MANIFEST", "BotError", "BotSpec", "digest_path"]

#: The manifest file of a bot folder.
MANIFEST = "bot.toml"
_MAX_NAME = 64
_MAX_BUILD = 4096
_SKIPPED_DIRS = frozenset({"__pycache__", ".git"})


class BotError(ValueError):
    """A folder or file that cannot be a bot; the message says why."""


@dataclass(frozen=True)
class BotSpec:
    """A bot ready to be run: where it is, what to call it, how to start it, its content hash.

    Attributes:
        path: the bot folder (with ``bot.toml``) or a single executable file.
        name: the manifest's ``name``, else the file or folder name.
        command: the argv run inside the folder.
        digest: SHA-256 over the folder's files (relative names and bytes); the same on every
            machine for the same files.
        trusted: built-in bots are trusted (they may run without a sandbox); uploads are not.
        version, author, description: from the manifest, empty when not given.
        build: the manifest's ``build`` shell command, empty when the bot needs no build.
        built: ``path`` is the result of the build (see :mod:`arena.referee.build`).
        variants: the variants the bot plays, in the engine's order; every variant unless
            the manifest names some.
    """

    path: Path
    name: str
    command: tuple[str, ...]
    digest: str
    trusted: bool = False
    version: str = ""
    author: str = ""
    description: str = ""
    build: str = ""
    variants: tuple[str, ...] = tuple(VARIANTS)
    built: bool = False

    @classmethod
    def load(cls, path: Path | str, *, trusted: bool = False) -> BotSpec:
        """Read a bot folder or executable file. Raises :class:`BotError`."""
        p = Path(path).expanduser()
        try:
            p = p.resolve(strict=True)
        except (OSError, RuntimeError):
            raise BotError(f"{path}: no such bot folder or file") from None
        if p.is_dir():
            return cls._load_folder(p, trusted)
        if p.is_file():
            if not os.access(p, os.X_OK):
                raise BotError(
                    f"{path}: a single-file bot must be executable (chmod +x), "
                    f"or be a folder with a {MANIFEST}"
                )
            return cls(p, p.name, (f"./{p.name}",), digest_path(p), trusted)
        raise BotError(f"{path}: not a folder or a regular file")

    @classmethod
    def _load_folder(cls, folder: Path, trusted: bool) -> BotSpec:
        manifest = folder / MANIFEST
        if not manifest.is_file():
            raise BotError(
                f"{folder}: no {MANIFEST}; a bot folder needs a manifest with at least "
                'name = "..." and command = "..."'
            )
        try:
            data = tomllib.loads(manifest.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise BotError(f"{manifest}: not UTF-8 text") from None
        except tomllib.TOMLDecodeError as e:
            raise BotError(f"{manifest}: not valid TOML: {e}") from None
        except RecursionError:  # tomllib reads nested arrays and tables by recursion
            raise BotError(f"{manifest}: nested too deeply to read") from None
        name = _text(data, "name", manifest, required=True)
        if len(name) > _MAX_NAME or not name.isprintable():
            raise BotError(f"{manifest}: name must be printable, at most {_MAX_NAME} characters")
        raw = data.get("command")
        if isinstance(raw, str):
            try:
                command = tuple(shlex.split(raw))
            except ValueError as e:
                raise BotError(f"{manifest}: command {raw!r} cannot be split: {e}") from None
        elif isinstance(raw, list) and all(isinstance(x, str) for x in raw):
            command = tuple(raw)
        elif raw is None:
            raise BotError(f'{manifest}: command is missing (e.g. command = "python3 main.py")')
        else:
            raise BotError(f"{manifest}: command must be a string")
        if not command or not command[0]:
            raise BotError(f"{manifest}: command is empty")
        if any(not word.isprintable() for word in command):
            raise BotError(f"{manifest}: command holds a control character: {raw!r}")
        return cls(
            folder,
            name,
            command,
            digest_path(folder),
            trusted,
            version=_text(data, "version", manifest),
            author=_text(data, "author", manifest),
            description=_text(data, "description", manifest),
            build=_build(data, manifest),
            variants=_variants(data, manifest),
        )

    @property
    def needs_build(self) -> bool:
        """Whether the bot has a build that was not run yet (it cannot be launched as it is)."""
        return bool(self.build) and not self.built

    def plays(self, variant: str) -> bool:
        """Whether the bot declares ``variant`` (every bot plays every variant by default)."""
        return variant in self.variants

    def require(self, variant: str) -> None:
        """Raise :class:`BotError` unless the bot declares ``variant``; the message names the
        bot and the variants it plays."""
        if not self.plays(variant):
            declared = ", ".join(f'"{v}"' for v in self.variants)
            raise BotError(
                f"{self.name} does not play {variant}: its {MANIFEST} declares "
                f"variants = [{declared}]"
            )

    @property
    def label(self) -> str:
        """The name with the version, as in record headers: ``random 1.0``."""
        return f"{self.name} {self.version}" if self.version else self.name

    @property
    def folder(self) -> Path:
        """The folder the bot runs in (a single-file bot's own folder)."""
        return self.path if self.path.is_dir() else self.path.parent

    def to_json(self) -> dict[str, Any]:
        """What a transcript keeps of the bot."""
        return {
            "name": self.name,
            "version": self.version,
            "path": str(self.path),
            "command": list(self.command),
            "digest": self.digest,
            "trusted": self.trusted,
            "build": self.build,
            "variants": list(self.variants),
        }


def _text(data: dict[str, Any], key: str, manifest: Path, *, required: bool = False) -> str:
    value = data.get(key)
    if value is None:
        if required:
            raise BotError(f'{manifest}: {key} is missing (e.g. {key} = "...")')
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool) and key == "version":
        return str(value)
    if not isinstance(value, str):
        raise BotError(f"{manifest}: {key} must be a string")
    if required and not value.strip():
        raise BotError(f"{manifest}: {key} is empty")
    # Stored and shown on the site: no control characters (a description may have lines).
    allowed = value.replace("\n", "").replace("\t", "") if key == "description" else value
    if not allowed.isprintable():
        what = "printable (lines and tabs allowed)" if key == "description" else "printable"
        raise BotError(f"{manifest}: {key} must be {what}: {value[:40]!r}")
    return value


def _build(data: dict[str, Any], manifest: Path) -> str:
    value = data.get("build")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BotError(f'{manifest}: build must be a string (a shell command, e.g. build = "make")')
    if not value.strip():
        raise BotError(f"{manifest}: build is empty (leave it out if the bot needs no build)")
    if len(value) > _MAX_BUILD:
        raise BotError(f"{manifest}: build is longer than {_MAX_BUILD} characters")
    if not value.replace("\n", "").replace("\t", "").isprintable():
        raise BotError(f"{manifest}: build holds a control character: {value[:40]!r}")
    return value


def _variants(data: dict[str, Any], manifest: Path) -> tuple[str, ...]:
    value = data.get("variants")
    known = ", ".join(f'"{v}"' for v in VARIANTS)
    if value is None:
        return tuple(VARIANTS)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BotError(f"{manifest}: variants must be a list of names, from {known}")
    if not value:
        raise BotError(f"{manifest}: variants is empty; name at least one of {known}")
    unknown = [v for v in value if v not in VARIANTS]
    if unknown:
        raise BotError(f"{manifest}: unknown variant {unknown[0]!r}; the variants are {known}")
    return tuple(v for v in VARIANTS if v in value)


def digest_path(path: Path) -> str:
    """SHA-256 over a bot's files: for each file in name order, its relative name and bytes.

    Symbolic links count by their target text and are never followed; ``__pycache__`` folders
    are skipped (they differ between machines). A special file (a pipe, a device) is a
    :class:`BotError`.
    """
    h = hashlib.sha256()
    root = path if path.is_dir() else path.parent
    files = [path] if not path.is_dir() else _walk(path)
    for f in sorted(files, key=lambda q: q.relative_to(root).as_posix().encode()):
        rel = f.relative_to(root).as_posix().encode()
        st = f.lstat()
        if stat.S_ISLNK(st.st_mode):
            _chunk(h, b"link", rel, os.readlink(f).encode())
        elif stat.S_ISREG(st.st_mode):
            _chunk(h, b"file", rel)
            h.update(st.st_size.to_bytes(8, "big"))
            with f.open("rb") as fh:
                while block := fh.read(1 << 20):
                    h.update(block)
        else:
            raise BotError(f"{f}: not a regular file (a bot folder holds files and folders only)")
    return h.hexdigest()


def _walk(folder: Path) -> list[Path]:
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            if d in _SKIPPED_DIRS:
                continue
            if (base / d).is_symlink():
                out.append(base / d)
            else:
                keep.append(d)
        dirnames[:] = keep
        out.extend(base / f for f in filenames)
    return out


def _chunk(h: Any, *parts: bytes) -> None:
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
