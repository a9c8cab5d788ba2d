"""Small typed readers of environment variables, used by the settings.

Every setting has a default that gives a working local site; production overrides them.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import Any

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    low = value.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"{name}={value!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a whole number") from None


def env_path(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value).expanduser().resolve() if value else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{name}={value!r}: expected a number") from None


def machine_secret_key(path: Path) -> str:
    """The secret key kept in ``path``, made (random, readable by its owner only) the first
    time it is asked for. Every process on the machine reads the same key; one made by a
    process that lost the race to make it is thrown away.
    """
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(50) + "\n")
        with contextlib.suppress(FileExistsError):
            os.link(draft, path)  # atomic: the first one made wins
    finally:
        os.unlink(draft)
    return _read_key(path)


def _read_key(path: Path) -> str:
    key = path.read_text().strip()
    if len(key) < 50:
        raise ValueError(f"{path}: the secret key in it is too short; delete it to make a new one")
    return key


def bot_storage(value: str, folder: Path) -> dict[str, Any]:
    """The ``STORAGES`` entry of the bot store that ``value`` names:

    * ``database`` (or nothing): the database, which every machine of the arena reaches anyway;
    * ``folder`` (the folder ``folder``) or ``folder:/some/path``: a local folder, for a single
      machine or one that every worker mounts;
    * ``s3://bucket`` or ``s3://bucket/prefix``: an S3-compatible object store through
      django-storages (``pip install .[s3]``); credentials, region and endpoint come from the
      AWS SDK's own environment variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``,
      ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL_S3``).

    >>> bot_storage("s3://uploads/arena", Path("/x"))["OPTIONS"]["location"]
    'arena'
    >>> bot_storage("folder:/srv/bots", Path("/x"))["OPTIONS"]["location"]
    '/srv/bots'
    """
    text = value.strip()
    if text in ("", "database"):
        return {"BACKEND": "arena.bots.storage.DatabaseStorage"}
    if text == "folder" or text.startswith("folder:"):
        path = text.removeprefix("folder").removeprefix(":")
        return {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {
                "location": str(Path(path).expanduser().resolve()) if path else str(folder),
                "file_permissions_mode": 0o644,
                "allow_overwrite": True,
            },
        }
    if text.startswith("s3://"):
        bucket, _, prefix = text.removeprefix("s3://").partition("/")
        if bucket:
            return {
                "BACKEND": "storages.backends.s3.S3Storage",
                # Names are hashes: saving one again writes the same bytes.
                "OPTIONS": {
                    "bucket_name": bucket,
                    "location": prefix.strip("/"),
                    "file_overwrite": True,
                },
            }
    raise ValueError(
        f"{value!r}: expected database, folder, folder:/some/path, s3://bucket or s3://bucket/prefix"
    )
