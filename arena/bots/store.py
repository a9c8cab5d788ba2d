"""The bot store: uploaded files kept by the SHA-256 of their bytes.

The web process writes here (``put``) and never reads the files back except to let an owner
download them; workers read them (``path``) and unpack them into their own cache
(:mod:`arena.bots.unpack`). Every worker machine sees the same store (a shared folder, see
docs/deployment.md). A file's name is its hash, so writing the same bytes twice is harmless and
two machines can never disagree about what a name holds.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings


def root() -> Path:
    return Path(settings.BOT_STORE_DIR)


def path(sha256: str) -> Path:
    """Where the file with this hash is kept: ``<store>/ab/abcdef...``."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return root() / sha256[:2] / sha256


def put(chunks: Iterable[bytes]) -> tuple[str, int]:
    """Store the bytes; return their SHA-256 and size. Atomic: a reader never sees half a file."""
    base = root()
    base.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    size = 0
    fd, tmp = tempfile.mkstemp(prefix=".upload-", dir=base)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                h.update(chunk)
                size += len(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        digest = h.hexdigest()
        final = path(digest)
        final.parent.mkdir(exist_ok=True)
        os.chmod(tmp, 0o644)
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest, size


def put_bytes(data: bytes) -> tuple[str, int]:
    return put([data])


def exists(sha256: str) -> bool:
    return path(sha256).is_file()
