"""The bot store: uploaded files kept by the SHA-256 of their bytes.

The files live behind Django's storage API, in the storage named ``bots`` (``STORAGES``,
chosen by ``ARENA_BOT_STORAGE``): the database by default
(:class:`arena.bots.storage.DatabaseStorage`), an S3-compatible object store, or a local
folder. The web process writes here (:func:`put`) and reads a file back only to let an owner
download it or to publish a trial (:func:`open`). A worker copies a file into a folder of its
own (:func:`fetch`), checking its hash on arrival, and unpacks it there
(:mod:`arena.bots.unpack`); no machine needs to see another's folders. A file's name is its
hash, so writing the same bytes twice is harmless and two machines can never disagree about
what a name holds.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from django.core.files import File
from django.core.files.storage import Storage, storages

from arena.bots.unpack import StoredFileError

#: The alias of the bot store in ``STORAGES``.
ALIAS = "bots"
_CHUNK = 1 << 20
_HASH = re.compile(r"[0-9a-f]{64}")


def storage() -> Storage:
    return storages[ALIAS]


def name(sha256: str) -> str:
    """The file's name in the storage: ``ab/abcdef...``."""
    if not _HASH.fullmatch(sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return f"{sha256[:2]}/{sha256}"


def put(chunks: Iterable[bytes], into: Storage | None = None) -> tuple[str, int]:
    """Store the bytes; return their SHA-256 and size. They are hashed on their way into a
    temporary file, then saved under their hash unless the store has that name already."""
    h = hashlib.sha256()
    size = 0
    with tempfile.TemporaryFile() as tmp:
        for chunk in chunks:
            h.update(chunk)
            size += len(chunk)
            tmp.write(chunk)
        digest = h.hexdigest()
        tmp.seek(0)
        save(digest, tmp, into)
    return digest, size


def save(sha256: str, content: IO[bytes], into: Storage | None = None) -> None:
    """Save ``content`` (whose hash the caller has checked) under its hash, unless there."""
    target = into or storage()
    key = name(sha256)
    if target.exists(key):
        return
    saved = target.save(key, File(content, name=key))
    if saved != key:  # a backend that renames instead of overwriting: a configuration error
        target.delete(saved)
        raise RuntimeError(f"the bot store saved {key} as {saved}; it must keep names as given")


def put_bytes(data: bytes) -> tuple[str, int]:
    return put([data])


def open(sha256: str) -> File[Any]:
    """The stored file, open for reading. Raises FileNotFoundError when it is not there."""
    return storage().open(name(sha256), "rb")


def exists(sha256: str) -> bool:
    return storage().exists(name(sha256))


def hashes(source: Storage | None = None) -> Iterator[str]:
    """The hashes of the files in the store (names ``ab/abcdef...``; others are not its)."""
    source = source or storage()
    folders, _ = source.listdir("")
    for folder in sorted(folders):
        if len(folder) != 2:
            continue
        for filename in sorted(source.listdir(folder)[1]):
            if _HASH.fullmatch(filename) and filename.startswith(folder):
                yield filename


def fetch(sha256: str, folder: Path) -> Path:
    """The stored file, copied into ``folder`` as ``folder/<sha256>`` and checked against its
    hash on arrival; a copy already there is used as it is (it was checked when it came).

    Atomic: the copy is written under a temporary name and renamed into place, so a process
    never sees half of it. Raises :class:`~arena.bots.unpack.StoredFileError` (an
    infrastructure failure, never the bot's) when the store lacks the file or its bytes do not
    match their hash.
    """
    final = folder / name(sha256).split("/")[1]
    if final.is_file():
        return final
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".fetch-", dir=folder)
    try:
        h = hashlib.sha256()
        with builtins.open(fd, "wb") as out:
            try:
                source = open(sha256)
            except FileNotFoundError:
                raise StoredFileError(f"{name(sha256)}: not in the bot store") from None
            with source:
                while block := source.read(_CHUNK):
                    h.update(block)
                    out.write(block)
        if h.hexdigest() != sha256:
            raise StoredFileError(
                f"{name(sha256)}: its bytes do not match their hash (damaged store)"
            )
        os.replace(tmp, final)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    return final
