"""A Django storage that keeps files in the database (:class:`~arena.bots.models.StoredFile`).

It is the bot store's default backend (``ARENA_BOT_STORAGE=database``): the web server and the
workers already share the database, so uploads reach every worker with no shared folder and no
other server. A file is one row, read and written whole; the uploads it holds are at most
``ARENA_BOT_UPLOAD_MAX_BYTES`` (20 MiB by default), which both SQLite and PostgreSQL keep in a
single value. Names are never changed to make room: saving under a name that exists keeps the
row already there, which is right for a store whose names are the hashes of their bytes.
"""

from __future__ import annotations

from typing import IO, Any

from django.core.files.base import ContentFile, File
from django.core.files.storage import Storage
from django.utils.deconstruct import deconstructible

from arena.bots.models import StoredFile


@deconstructible(path="arena.bots.storage.DatabaseStorage")
class DatabaseStorage(Storage):
    """Files as rows of :class:`~arena.bots.models.StoredFile`."""

    def _open(self, name: str, mode: str = "rb") -> File[Any]:
        if "w" in mode or "a" in mode or "+" in mode:
            raise ValueError(f"{name}: files in the database are written with save(), not open()")
        content = StoredFile.objects.filter(name=name).values_list("content", flat=True).first()
        if content is None:
            raise FileNotFoundError(f"{name}: no such file in the database storage")
        return ContentFile(bytes(content), name=name)

    def _save(self, name: str, content: IO[bytes]) -> str:
        if hasattr(content, "seek"):
            content.seek(0)
        data = content.read()
        # INSERT ... ON CONFLICT DO NOTHING: two uploads of the same bytes both succeed.
        StoredFile.objects.bulk_create(
            [StoredFile(name=name, size=len(data), content=data)], ignore_conflicts=True
        )
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
