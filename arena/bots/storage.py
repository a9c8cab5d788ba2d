"""A Django storage that keeps files in the database (:class:`~arena.bots.models.StoredFile`).

It is the bot store's default backend (``ARENA_BOT_STORAGE=database``): the web server and the
workers already share the database, so uploads reach every worker with no shared folder and no
other server. A file's bytes are rows of 1 MiB (:class:`~arena.bots.models.StoredFileChunk`),
written and read one at a time: a 20 MiB upload in one value made the database driver hold
several copies of it at once in the process writing or reading it. A file and its chunks are
written in one transaction, so a reader sees all of it or nothing. Names are never changed to
make room: saving under a name that exists keeps the file already there, which is right for a
store whose names are the hashes of their bytes.
"""

from __future__ import annotations

import tempfile
from typing import IO, Any

from django.core.files.base import File
from django.core.files.storage import Storage
from django.db import IntegrityError, transaction
from django.utils.deconstruct import deconstructible

from arena.bots.models import StoredFile, StoredFileChunk

#: The size of a chunk, and the most a file kept in memory while it is read back.
CHUNK = 1 << 20


@deconstructible(path="arena.bots.storage.DatabaseStorage")
class DatabaseStorage(Storage):
    """Files as rows of :class:`~arena.bots.models.StoredFile` and their chunks."""

    def _open(self, name: str, mode: str = "rb") -> File[Any]:
        if "w" in mode or "a" in mode or "+" in mode:
            raise ValueError(f"{name}: files in the database are written with save(), not open()")
        # The file's row is visible only with all its chunks (one transaction wrote them).
        if not StoredFile.objects.filter(name=name).exists():
            raise FileNotFoundError(f"{name}: no such file in the database storage")
        chunks = StoredFileChunk.objects.filter(file_id=name).order_by("index")
        out = tempfile.SpooledTemporaryFile(max_size=CHUNK)  # noqa: SIM115 (the caller's to close)
        try:
            for data in chunks.values_list("data", flat=True).iterator(chunk_size=1):
                out.write(data)
            out.seek(0)
        except BaseException:
            out.close()
            raise
        return File(out, name=name)

    def _save(self, name: str, content: IO[bytes]) -> str:
        if hasattr(content, "seek"):
            content.seek(0)
        try:
            with transaction.atomic():
                stored = StoredFile.objects.create(name=name, size=0)
                size = index = 0
                while data := content.read(CHUNK):
                    StoredFileChunk.objects.create(file=stored, index=index, data=data)
                    size += len(data)
                    index += 1
                stored.size = size
                stored.save(update_fields=["size"])
        except IntegrityError:
            if not self.exists(name):
                raise
            # Saved meanwhile by another process: the same name, so the same bytes.
        return name

    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        """The name itself: it is never changed to make room (see the module's docstring)."""
        return name

    def exists(self, name: str) -> bool:
        return StoredFile.objects.filter(name=name).exists()

    def delete(self, name: str) -> None:
        StoredFile.objects.filter(name=name).delete()

    def size(self, name: str) -> int:
        size = StoredFile.objects.filter(name=name).values_list("size", flat=True).first()
        if size is None:
            raise FileNotFoundError(f"{name}: no such file in the database storage")
        return size

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = f"{path.rstrip('/')}/" if path.strip("/") else ""
        folders: set[str] = set()
        files = []
        for name in StoredFile.objects.filter(name__startswith=prefix).values_list(
            "name", flat=True
        ):
            rest = name[len(prefix) :]
            if "/" in rest:
                folders.add(rest.split("/", 1)[0])
            else:
                files.append(rest)
        return sorted(folders), sorted(files)
