"""The downloads a bot author needs besides the guide, made from the project's own modules.

* :func:`sdk_archive`: the Python bot SDK (``yinshbot``) with the rules library it uses
  (``engine``), as a zip to unpack next to a bot or to ``pip install``;
* :func:`checkbot_archive`: ``checkbot.pyz``, the local checker (:mod:`arena.referee.checker`)
  as one file that Python 3.11 or later runs by itself: the engine, the referee's plain-Python
  modules and the random bot, with a small ``__main__`` that unpacks them into a temporary
  folder (the random bot and the bot's library must be real files for processes to use them)
  and runs the check from there.

Both are built from the files as they are now, never from a copy kept aside: the same files
give the same bytes (entries sorted and dated 1980-01-01), and a process builds each archive
again only when one of its files changed (the cache is keyed by their modification times).
"""

from __future__ import annotations

import functools
import io
import zipfile
from collections.abc import Iterable
from pathlib import Path

from arena.referee.library import ROOT

__all__ = ["CHECKBOT_NAME", "SDK_NAME", "checkbot_archive", "checkbot_files", "sdk_archive"]

SDK_NAME = "yinsh-sdk"
CHECKBOT_NAME = "checkbot.pyz"
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)

_MAIN = '''\
"""checkbot: the YINSH arena's protocol check of a bot, run on your machine.

Usage: python3 checkbot.pyz BOT_FOLDER   or   python3 checkbot.pyz -- COMMAND ...
(--help for the options). Needs Python 3.11 or later and nothing else.
"""

import sys

if sys.version_info < (3, 11):
    sys.exit("checkbot needs Python 3.11 or later")

import tempfile
import zipfile

with tempfile.TemporaryDirectory(prefix="checkbot-") as _home:
    with zipfile.ZipFile(sys.argv[0]) as _archive:
        _archive.extractall(_home)
    sys.path.insert(0, _home)
    from arena.referee.checker import main

    _status = main()
sys.exit(_status)
'''

_SDK_README = """\
The YINSH arena's Python bot SDK
================================

yinshbot/  the SDK: a bot is one function, choose(request), given to yinshbot.run
engine/    the rules library yinshbot uses (request.state() gives an engine.State)

Either copy both folders next to your bot's main.py (upload them with it), or install them:

    pip install ./yinsh-sdk

The arena makes both importable inside its sandbox, so an uploaded bot may also leave them out.
Python 3.11 or later, standard library only. The site's guide explains the protocol, the
position and the SDK; checkbot.pyz, also on the guide, checks a bot on your machine.
"""

_SDK_PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "yinshbot"
version = "1"
description = "Write a YINSH arena bot as one function (with the engine, the rules library)"
requires-python = ">=3.11"

[tool.setuptools]
packages = ["yinshbot", "engine"]

[tool.setuptools.package-data]
engine = ["py.typed"]
"""


def _package(folder: Path) -> list[Path]:
    """The files of a Python package: its modules and marker files, no caches."""
    return sorted(
        p
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix in (".py", ".typed")
    )


def sdk_files() -> list[tuple[str, Path]]:
    """(name in the archive, file) for the SDK's zip, under its one folder."""
    files = [(f"{SDK_NAME}/yinshbot/{p.name}", p) for p in _package(ROOT / "bots/sdk/yinshbot")]
    files += [(f"{SDK_NAME}/{p.relative_to(ROOT)}", p) for p in _package(ROOT / "engine")]
    return files


def checkbot_files() -> list[tuple[str, Path]]:
    """(name in the archive, file) for ``checkbot.pyz``: the paths stay those of the project,
    so the modules find each other (and the random bot) as they do in the arena."""
    paths = [ROOT / "arena/__init__.py"]
    for folder in ("engine", "arena/referee", "bots/sdk/yinshbot"):
        paths += _package(ROOT / folder)
    paths += sorted(p for p in (ROOT / "bots/random").iterdir() if p.is_file())
    return [(str(p.relative_to(ROOT)), p) for p in paths]


def _stamps(files: Iterable[tuple[str, Path]]) -> tuple[tuple[str, int], ...]:
    return tuple((name, path.stat().st_mtime_ns) for name, path in files)


def sdk_archive() -> tuple[str, bytes]:
    """The SDK as a zip: its file name and bytes (see the module docstring)."""
    files = sdk_files()
    return f"{SDK_NAME}.zip", _sdk(tuple(files), _stamps(files))


def checkbot_archive() -> tuple[str, bytes]:
    """``checkbot.pyz``: its file name and bytes (see the module docstring)."""
    files = checkbot_files()
    return CHECKBOT_NAME, _checkbot(tuple(files), _stamps(files))


@functools.lru_cache(maxsize=2)
def _sdk(files: tuple[tuple[str, Path], ...], stamps: tuple[tuple[str, int], ...]) -> bytes:
    extra = [
        (f"{SDK_NAME}/README.txt", _SDK_README),
        (f"{SDK_NAME}/pyproject.toml", _SDK_PYPROJECT),
    ]
    return _zip([(n, p.read_bytes()) for n, p in files] + [(n, t.encode()) for n, t in extra])


@functools.lru_cache(maxsize=2)
def _checkbot(files: tuple[tuple[str, Path], ...], stamps: tuple[tuple[str, int], ...]) -> bytes:
    entries = [("__main__.py", _MAIN.encode())] + [(n, p.read_bytes()) for n, p in files]
    return _zip(entries, prefix=b"#!/usr/bin/env python3\n")


def _zip(entries: list[tuple[str, bytes]], prefix: bytes = b"") -> bytes:
    """A zip of ``entries`` after ``prefix`` (a zipapp's interpreter line, as zipapp writes it)."""
    buf = io.BytesIO()
    buf.write(prefix)
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            info.create_system = 3  # Unix, so that the mode above is read
            zf.writestr(info, data)
    return buf.getvalue()
