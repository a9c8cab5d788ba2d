"""Uploaded bots: recognising them (web process) and unpacking them safely (workers only).

The web process calls :func:`detect_kind` on the first bytes of an upload and nothing else: it
never opens an archive. A worker unpacks with :func:`unpack_archive`, which refuses, with a
message naming the offending entry:

* absolute paths, ``..`` components, backslashes and drive letters;
* symbolic links, hard links, devices, pipes and any other special entry;
* more than ``max_files`` entries, more than ``max_bytes`` unpacked, or a compression ratio above
  ``max_ratio`` (a zip or gzip bomb), checked before anything is written and again while
  writing (headers can lie);
* encrypted zip entries, and names given twice.

Files are written with ``O_EXCL | O_NOFOLLOW`` under a fresh folder, so even a bug in the
checks above could not write outside it. :func:`ensure_unpacked` keeps the result in the
worker's cache (``BOT_CACHE_DIR``), keyed by the upload's hash, and returns the loaded
:class:`~arena.referee.bots.BotSpec`.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from arena.core.errors import Refused
from arena.referee.bots import MANIFEST, BotError, BotSpec
from arena.referee.errors import InfrastructureError

_CHUNK = 1 << 16
#: Below this many unpacked bytes the compression ratio is not checked (tar's padding alone
#: compresses 50:1).
_RATIO_FLOOR = 1024 * 1024
_SAFE_FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


class UploadError(Refused, ValueError):
    """An upload refused by the web process (wrong type, too big, empty): a 400 about the
    uploaded file."""

    field = "file"


class UnpackError(ValueError):
    """An archive that cannot be unpacked safely; the message says which entry and why."""


@dataclass(frozen=True)
class Limits:
    max_files: int = 2000
    max_bytes: int = 200 * 1024 * 1024
    max_ratio: int = 100


# ----------------------------------------------------------------------------- web process

ZIP, TARGZ, FILE = "zip", "tar.gz", "file"
_OTHER_ARCHIVES = {
    b"Rar!": "RAR",
    b"7z\xbc\xaf": "7-Zip",
    b"BZh": "bzip2",
    b"\xfd7zXZ": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
}


def safe_filename(name: str) -> str:
    """The upload's file name reduced to ``[A-Za-z0-9._-]`` (no folders, no leading dot).

    >>> safe_filename("../../etc/My Bot!.py")
    'My_Bot_.py'
    >>> safe_filename("...")
    'bot'
    """
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _SAFE_FILENAME.sub("_", base).lstrip(".")[:100]
    return cleaned or "bot"


def detect_kind(head: bytes, filename: str) -> str:
    """What an upload is, from its first bytes and its name. Raises :class:`UploadError`.

    A ``.zip`` must be a zip archive, a ``.tar.gz`` / ``.tgz`` a gzip stream; any other file is
    a single-file bot and must start with ``#!`` (a script) or be an ELF program.

    >>> detect_kind(b"PK\\x03\\x04rest", "bot.zip"), detect_kind(b"#!/bin/sh", "bot")
    ('zip', 'file')
    >>> detect_kind(b"\\x1f\\x8b\\x08", "bot.tgz")
    'tar.gz'
    """
    low = filename.lower()
    if not head:
        raise UploadError("the file is empty")
    for magic, what in _OTHER_ARCHIVES.items():
        if head.startswith(magic):
            raise UploadError(
                f"{filename} is a {what} archive: upload a .zip or a .tar.gz archive instead"
            )
    is_zip = head.startswith(b"PK\x03\x04")
    is_gzip = head.startswith(b"\x1f\x8b")
    if low.endswith(".zip"):
        if head.startswith(b"PK\x05\x06"):
            raise UploadError(f"{filename} is an empty zip archive")
        if not is_zip:
            raise UploadError(f"{filename} is not a zip archive (its first bytes are wrong)")
        return ZIP
    if low.endswith((".tar.gz", ".tgz")):
        if not is_gzip:
            raise UploadError(f"{filename} is not a gzip-compressed tar archive")
        return TARGZ
    if low.endswith((".tar", ".tar.bz2", ".tar.xz", ".tbz2", ".txz", ".rar", ".7z", ".gz")):
        raise UploadError(
            f"{filename}: only .zip and .tar.gz archives are accepted, or a single executable file"
        )
    if is_zip:
        return ZIP
    if is_gzip:
        return TARGZ
    if head.startswith(b"#!") or head.startswith(b"\x7fELF"):
        return FILE
    raise UploadError(
        f"{filename} is not a bot: upload a .zip or .tar.gz archive with a {MANIFEST}, or a "
        "single executable file (a script starting with #! or a compiled program)"
    )


# ----------------------------------------------------------------------------- workers


def _entry_parts(name: str) -> tuple[str, ...]:
    """The path components of an archive entry, or UnpackError if it could escape."""
    if "\x00" in name:
        raise UnpackError(f"entry {name!r}: a NUL byte in the name")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        # tarfile keeps undecodable bytes as lone surrogates: a name in another encoding.
        shown = name.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise UnpackError(f"entry {shown!r}: the name is not UTF-8") from None
    if "\\" in name:
        raise UnpackError(f"entry {name!r}: backslashes are not allowed in names")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise UnpackError(f"entry {name!r}: an absolute path")
    parts = tuple(p for p in PurePosixPath(name).parts if p not in ("", "."))
    if ".." in parts:
        raise UnpackError(f"entry {name!r}: a '..' component (path traversal)")
    return parts


#: What reading a damaged zip's entries raises. The archive's bytes were checked against their
#: hash before unpacking, so these come from what the archive holds, not from the machine:
#: ``OSError`` and ``ValueError`` are zipfile's answers to offsets that point outside the file.
_ZIP_DAMAGE = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, OSError, ValueError)
_TAR_DAMAGE = (tarfile.TarError, zlib.error, EOFError, OSError, ValueError)


class _Entry:
    """An entry's bytes as read from its archive: the archive's damage met while reading them
    is an :class:`UnpackError` (a failure to write them out stays what it is)."""

    def __init__(self, name: str, source: IO[bytes], damage: tuple[type[Exception], ...]):
        self.name = name
        self.source = source
        self.damage = damage

    def read(self, n: int) -> bytes:
        try:
            return self.source.read(n)
        except self.damage as e:
            raise UnpackError(f"entry {self.name!r}: cannot be read: {e}") from None


class _Writer:
    """Writes checked entries under ``dest``, counting files and bytes against the limits."""

    def __init__(self, dest: Path, limits: Limits) -> None:
        self.dest = dest
        self.limits = limits
        self.files = 0
        self.bytes = 0

    def folder(self, parts: tuple[str, ...]) -> None:
        path = self.dest
        for part in parts:
            path = path / part
            try:
                path.mkdir(mode=0o755)
            except FileExistsError:
                if path.is_symlink() or not path.is_dir():
                    raise UnpackError(
                        f"{'/'.join(parts)}: a file and a folder share a name"
                    ) from None

    def file(self, name: str, parts: tuple[str, ...], source: _Entry, executable: bool) -> None:
        if not parts:
            raise UnpackError(f"entry {name!r}: an empty name")
        self.files += 1
        if self.files > self.limits.max_files:
            raise UnpackError(f"more than {self.limits.max_files} files")
        self.folder(parts[:-1])
        target = self.dest.joinpath(*parts)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(target, flags, 0o755 if executable else 0o644)
        except FileExistsError:
            raise UnpackError(f"entry {name!r}: given twice") from None
        except IsADirectoryError:
            raise UnpackError(f"entry {name!r}: a file and a folder share a name") from None
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(_CHUNK):
                self.bytes += len(chunk)
                if self.bytes > self.limits.max_bytes:
                    raise UnpackError(
                        f"the archive unpacks to more than {self.limits.max_bytes} bytes"
                    )
                out.write(chunk)
        os.chmod(target, 0o755 if executable else 0o644)


def _check_totals(files: int, total: int, packed: int, limits: Limits) -> None:
    if files > limits.max_files:
        raise UnpackError(f"the archive holds {files} files; at most {limits.max_files} allowed")
    if total > limits.max_bytes:
        raise UnpackError(
            f"the archive unpacks to {total} bytes; at most {limits.max_bytes} allowed"
        )
    if packed > 0 and total > _RATIO_FLOOR and total / packed > limits.max_ratio:
        raise UnpackError(
            f"the archive's compression ratio is {total / packed:.0f}:1; at most "
            f"{limits.max_ratio}:1 is allowed (a zip bomb?)"
        )


def _unpack_zip(archive: Path, writer: _Writer) -> None:
    try:
        zf = zipfile.ZipFile(archive)
    except _ZIP_DAMAGE as e:  # a name not the UTF-8 it says is a ValueError
        raise UnpackError(f"not a readable zip archive: {e}") from None
    with zf:
        infos = zf.infolist()
        _check_totals(
            len(infos), sum(i.file_size for i in infos), archive.stat().st_size, writer.limits
        )
        checked = []
        for info in infos:
            parts = _entry_parts(info.filename)
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)
            if info.flag_bits & 0x1:
                raise UnpackError(f"entry {info.filename!r}: encrypted entries are not allowed")
            if kind and stat.S_ISLNK(mode):
                raise UnpackError(f"entry {info.filename!r}: a symbolic link")
            if kind and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise UnpackError(f"entry {info.filename!r}: a device or other special file")
            checked.append((info, parts, mode))
        for info, parts, mode in checked:
            if info.is_dir():
                writer.folder(parts)
                continue
            try:
                source = zf.open(info)
            except _ZIP_DAMAGE as e:
                raise UnpackError(f"entry {info.filename!r}: cannot be read: {e}") from None
            with source:
                entry = _Entry(info.filename, source, _ZIP_DAMAGE)
                writer.file(info.filename, parts, entry, bool(mode & 0o111))


def _unpack_targz(archive: Path, writer: _Writer) -> None:
    limits = writer.limits
    packed = archive.stat().st_size
    # Measure the decompressed stream first without keeping it: a gzip bomb, or a huge tar
    # header that tarfile would read into memory, is refused before tarfile sees it.
    raw = 0
    try:
        with gzip.open(archive, "rb") as stream:
            while chunk := stream.read(_CHUNK):
                raw += len(chunk)
                if raw > limits.max_bytes + 1024 * 1024:
                    raise UnpackError(f"the archive unpacks to more than {limits.max_bytes} bytes")
                if packed and raw > _RATIO_FLOOR and raw / packed > limits.max_ratio:
                    raise UnpackError(
                        f"the archive's compression ratio is above {limits.max_ratio}:1 "
                        "(a gzip bomb?)"
                    )
    except (OSError, EOFError, zlib.error) as e:
        raise UnpackError(f"not a readable gzip stream: {e}") from None
    try:
        tf = tarfile.open(archive, "r:gz")  # noqa: SIM115 (closed by the with below)
    except _TAR_DAMAGE as e:
        raise UnpackError(f"not a readable tar.gz archive: {e}") from None
    with tf:
        try:
            members = tf.getmembers()
        except _TAR_DAMAGE as e:
            raise UnpackError(f"not a readable tar.gz archive: {e}") from None
        _check_totals(len(members), sum(m.size for m in members), packed, limits)
        for m in members:
            parts = _entry_parts(m.name)
            if m.issym():
                raise UnpackError(f"entry {m.name!r}: a symbolic link")
            if m.islnk():
                raise UnpackError(f"entry {m.name!r}: a hard link")
            if not (m.isreg() or m.isdir()):
                raise UnpackError(f"entry {m.name!r}: a device or other special file")
        for m in members:
            parts = _entry_parts(m.name)
            if m.isdir():
                writer.folder(parts)
                continue
            try:
                source = tf.extractfile(m)
            except _TAR_DAMAGE as e:
                raise UnpackError(f"entry {m.name!r}: cannot be read: {e}") from None
            if source is None:  # pragma: no cover - regular members always have data
                raise UnpackError(f"entry {m.name!r}: no data")
            with source:
                writer.file(
                    m.name, parts, _Entry(m.name, source, _TAR_DAMAGE), bool(m.mode & 0o111)
                )


def bot_root(folder: Path) -> Path:
    """The folder holding ``bot.toml``: the top of the archive, or its only folder."""
    if (folder / MANIFEST).is_file():
        return folder
    entries = [p for p in folder.iterdir() if p.name not in ("__MACOSX",)]
    if len(entries) == 1 and entries[0].is_dir() and (entries[0] / MANIFEST).is_file():
        return entries[0]
    raise UnpackError(
        f"no {MANIFEST} at the top of the archive (or in its only folder); a bot archive "
        f'needs a manifest with name = "..." and command = "..."'
    )


def unpack_archive(archive: Path, kind: str, dest: Path, limits: Limits) -> Path:
    """Unpack ``archive`` into the new folder ``dest``; return the bot's root folder.

    Raises :class:`UnpackError`; ``dest`` is then left for the caller to delete.
    """
    dest.mkdir(mode=0o755)
    writer = _Writer(dest, limits)
    if kind == ZIP:
        _unpack_zip(archive, writer)
    elif kind == TARGZ:
        _unpack_targz(archive, writer)
    else:
        raise ValueError(f"not an archive kind: {kind!r}")
    return bot_root(dest)


def cache_key(sha256: str, kind: str, filename: str) -> str:
    """The name of an upload's folder in the cache (a single file keeps its name too).

    >>> cache_key("ab" * 32, ZIP, "bot.zip") == "ab" * 32
    True
    >>> cache_key("ab" * 32, FILE, "my bot.py")[64:]
    '-my_bot.py'
    """
    return sha256 if kind != FILE else f"{sha256}-{safe_filename(filename)}"


def ensure_unpacked(
    archive: Path | Callable[[Path], Path],
    *,
    sha256: str,
    kind: str,
    filename: str,
    cache: Path,
    limits: Limits,
    trusted: bool = False,
) -> BotSpec:
    """The bot from the stored file ``archive``, unpacked into ``cache`` once per hash.

    ``archive`` is the file, or a function that copies it into the folder it is given and
    returns its path (:func:`arena.bots.store.fetch`): it is called only when the cache lacks
    the bot, and the copy is removed once unpacked. Raises :class:`UnpackError` (also for a
    :class:`BotError` from the manifest), or :class:`StoredFileError` when the stored file is
    missing or damaged. Safe with several worker processes: each unpacks into a private
    folder and renames it into place; the first rename wins.
    """
    cache.mkdir(parents=True, exist_ok=True)
    os.chmod(cache, 0o755)
    final = cache / cache_key(sha256, kind, filename)
    if not final.is_dir():
        tmp = Path(tempfile.mkdtemp(prefix=".unpack-", dir=cache))
        try:
            # A name no unpacked file can have: safe_filename() never starts with a dot.
            if callable(archive):
                archive = archive(tmp / ".stored")
            _verify(archive, sha256)
            os.chmod(tmp, 0o755)
            if kind == FILE:
                target = tmp / safe_filename(filename)
                shutil.copyfile(archive, target)
                os.chmod(target, 0o755)
            else:
                unpack_archive(archive, kind, tmp / "bot", limits)
                _load(_locate(tmp / "bot", kind, filename), trusted)  # refuse before caching
            shutil.rmtree(tmp / ".stored", ignore_errors=True)
            try:
                os.rename(tmp, final)
            except OSError:
                if not final.is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    root = final / "bot" if kind != FILE else final
    return _load(_locate(root, kind, filename), trusted)


class StoredFileError(InfrastructureError, OSError):
    """The stored file is missing or damaged: an infrastructure failure, not the bot's."""


def _verify(archive: Path, sha256: str) -> None:
    h = hashlib.sha256()
    try:
        with archive.open("rb") as f:
            while block := f.read(1 << 20):
                h.update(block)
    except FileNotFoundError:
        raise StoredFileError(f"{archive}: not in the bot store") from None
    if h.hexdigest() != sha256:
        raise StoredFileError(f"{archive}: its bytes no longer match their hash (damaged store)")


def _locate(root: Path, kind: str, filename: str) -> Path:
    if kind == FILE:
        return root / safe_filename(filename)
    return bot_root(root)


def _load(path: Path, trusted: bool) -> BotSpec:
    try:
        return BotSpec.load(path, trusted=trusted)
    except BotError as e:
        text = str(e).replace(f"{path}/", "").replace(str(path), path.name)
        raise UnpackError(text) from None
