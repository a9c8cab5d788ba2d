"""The bot store over Django's storage API: the database storage (on SQLite, or on PostgreSQL
when the suite runs with ``DATABASE_URL``), a local folder, and an S3-compatible store (moto's
server, when installed); a worker's verified copy; moving a store from one to another."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path
from typing import Any

import pytest
from django.core.files.storage import Storage, storages
from django.core.management import CommandError, call_command

from arena.bots import store
from arena.bots.models import StoredFile, StoredFileChunk
from arena.bots.storage import CHUNK, DatabaseStorage
from arena.bots.unpack import TARGZ, Limits, StoredFileError, ensure_unpacked
from arena.env import bot_storage
from tests.arena.conftest import BOTS, packed


def folder_store(settings: Any, folder: Path) -> None:
    settings.STORAGES = {**settings.STORAGES, "bots": bot_storage(f"folder:{folder}", folder)}


@pytest.fixture(params=["database", "folder"])
def backend(request: Any, settings: Any, tmp_path: Path, db: Any) -> str:
    """Each test runs on the default store (the database) and on a local folder."""
    if request.param == "folder":
        folder_store(settings, tmp_path / "store")
    return str(request.param)


def test_the_default_store_is_the_database(db: Any) -> None:
    assert isinstance(store.storage(), DatabaseStorage)


def test_put_open_and_fetch_give_back_the_bytes(backend: str, tmp_path: Path) -> None:
    data = b"#!/bin/sh\necho hello\n" * 1000
    sha, size = store.put([data[:7], data[7:]])
    assert sha == hashlib.sha256(data).hexdigest() and size == len(data)
    assert store.exists(sha) and not store.exists("0" * 64)
    with store.open(sha) as f:
        assert f.read() == data
    copy = store.fetch(sha, tmp_path / "downloads")
    assert copy == tmp_path / "downloads" / sha and copy.read_bytes() == data
    assert sorted(p.name for p in copy.parent.iterdir()) == [sha]  # no temporary file left
    assert list(store.hashes()) == [sha]


def test_the_same_bytes_twice_are_one_file(backend: str) -> None:
    first = store.put_bytes(b"same")
    assert store.put_bytes(b"same") == first
    assert list(store.hashes()) == [first[0]]
    if backend == "database":
        assert StoredFile.objects.get().size == 4


def test_the_largest_upload_is_kept_in_chunks_and_read_back_whole(db: Any, settings: Any) -> None:
    data = hashlib.sha256(b"seed").digest() * (settings.BOT_UPLOAD_MAX_BYTES // 32 + 1)
    sha, size = store.put_bytes(data)
    assert StoredFile.objects.get(name=store.name(sha)).size == size == len(data)
    lengths = [
        len(d) for d in StoredFileChunk.objects.order_by("index").values_list("data", flat=True)
    ]
    assert lengths == [CHUNK] * (size // CHUNK) + [size % CHUNK]
    with store.open(sha) as f:
        assert hashlib.sha256(f.read()).hexdigest() == sha


def test_a_fetched_copy_is_used_again_without_the_store(db: Any, tmp_path: Path) -> None:
    sha, _ = store.put_bytes(b"kept")
    first = store.fetch(sha, tmp_path)
    StoredFile.objects.all().delete()
    assert store.fetch(sha, tmp_path) == first and first.read_bytes() == b"kept"


def test_bytes_that_do_not_match_their_name_are_refused_on_arrival(db: Any, tmp_path: Path) -> None:
    sha = hashlib.sha256(b"what was uploaded").hexdigest()
    DatabaseStorage().save(store.name(sha), io.BytesIO(b"damaged"))
    with pytest.raises(StoredFileError, match="do not match their hash"):
        store.fetch(sha, tmp_path / "downloads")
    assert list((tmp_path / "downloads").iterdir()) == []


def test_a_file_missing_from_the_store_is_an_infrastructure_error(
    backend: str, tmp_path: Path
) -> None:
    with pytest.raises(StoredFileError, match="not in the bot store"):
        store.fetch("1" * 64, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_name_that_is_not_a_hash_is_refused(db: Any) -> None:
    with pytest.raises(ValueError, match="not a SHA-256"):
        store.exists("../../etc/passwd")


def test_a_worker_unpacks_from_the_store_and_keeps_no_copy(db: Any, tmp_path: Path) -> None:
    data = packed(BOTS / "random")
    sha, _ = store.put_bytes(data)
    fetched: list[Path] = []

    def fetch(folder: Path) -> Path:
        fetched.append(store.fetch(sha, folder))
        return fetched[-1]

    cache = tmp_path / "cache"
    limits = Limits()
    spec = ensure_unpacked(
        fetch, sha256=sha, kind=TARGZ, filename="r.tar.gz", cache=cache, limits=limits
    )
    assert spec.name == "random" and len(fetched) == 1
    assert [p.name for p in cache.iterdir()] == [sha]  # the bot; its download is gone
    assert not fetched[0].exists()
    again = ensure_unpacked(
        fetch, sha256=sha, kind=TARGZ, filename="r.tar.gz", cache=cache, limits=limits
    )
    assert again.digest == spec.digest and len(fetched) == 1  # no second download


def test_database_storage_lists_folders_and_files(db: Any) -> None:
    storage = DatabaseStorage()
    storage.save("ab/one", io.BytesIO(b"1"))
    storage.save("ab/two", io.BytesIO(b"2"))
    storage.save("cd/three", io.BytesIO(b"3"))
    assert storage.save("ab/one", io.BytesIO(b"other")) == "ab/one"  # kept as it was
    assert storage.listdir("") == (["ab", "cd"], [])
    assert storage.listdir("ab") == ([], ["one", "two"])
    assert storage.size("ab/two") == 1
    with storage.open("ab/one") as f:
        assert f.read() == b"1"
    storage.delete("ab/two")
    assert not storage.exists("ab/two") and StoredFileChunk.objects.count() == 2
    with pytest.raises(FileNotFoundError):
        storage.open("ab/two")


@pytest.mark.parametrize("value", ["disk", "s3://", "folder/x", "s3:/bucket"])
def test_an_unknown_storage_is_refused_with_the_choices(value: str) -> None:
    with pytest.raises(ValueError, match="expected database, folder"):
        bot_storage(value, Path("/x"))


# ----------------------------------------------------------------------------- moving a store


def old_store(folder: Path, *contents: bytes) -> list[str]:
    """A folder as earlier releases kept the store: ``<folder>/ab/<sha256>``."""
    hashes = []
    for data in contents:
        sha = hashlib.sha256(data).hexdigest()
        (folder / sha[:2]).mkdir(parents=True, exist_ok=True)
        (folder / sha[:2] / sha).write_bytes(data)
        hashes.append(sha)
    (folder / ".upload-half-written").write_bytes(b"x")  # not a file of the store
    return hashes


def move(*args: str) -> str:
    out = io.StringIO()
    call_command("move_bot_store", *args, stdout=out)
    return out.getvalue()


def test_moving_a_folder_into_the_database_copies_each_file_once(db: Any, tmp_path: Path) -> None:
    folder = tmp_path / "bot-store"
    hashes = old_store(folder, b"one", b"two", b"three")
    before = sorted(str(p) for p in folder.rglob("*"))

    assert "would copy 3 files; 0 already there" in move("--from", f"folder:{folder}", "--dry-run")
    assert not StoredFile.objects.exists()

    assert "copied 3 files; 0 already there; 0 damaged" in move("--from", f"folder:{folder}")
    assert list(store.hashes()) == sorted(hashes)
    with store.open(hashes[0]) as f:
        assert hashlib.sha256(f.read()).hexdigest() == hashes[0]

    assert "copied 0 files; 3 already there" in move(
        "--from", f"folder:{folder}", "--to", "default"
    )
    assert StoredFile.objects.count() == 3
    assert sorted(str(p) for p in folder.rglob("*")) == before  # the source is left as it was


def test_a_damaged_file_is_not_moved_and_the_command_fails(db: Any, tmp_path: Path) -> None:
    folder = tmp_path / "bot-store"
    good, bad = old_store(folder, b"good", b"bad")
    (folder / bad[:2] / bad).write_bytes(b"changed")
    with pytest.raises(CommandError, match="1 files of the source do not match their hash"):
        move("--from", f"folder:{folder}")
    assert list(store.hashes()) == [good]
    assert not store.exists(bad)


def test_moving_needs_two_stores_it_knows(db: Any) -> None:
    with pytest.raises(CommandError, match="the same store"):
        move("--from", "default", "--to", "default")
    with pytest.raises(CommandError, match="expected database, folder"):
        move("--from", "nfs:/srv")


# ----------------------------------------------------------------------------- S3


def test_put_and_fetch_through_an_s3_compatible_store(
    db: Any, settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moto_server = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    try:
        host, port = server.get_host_and_port()
        for name, value in {
            "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}",
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
        }.items():
            monkeypatch.setenv(name, value)
        boto3.client("s3").create_bucket(Bucket="arena-bots")
        settings.STORAGES = {
            **settings.STORAGES,
            "bots": bot_storage("s3://arena-bots/uploads", tmp_path),
        }
        s3: Storage = storages["bots"]
        assert type(s3).__name__ == "S3Storage"

        sha, _ = store.put_bytes(b"a bot in a bucket")
        assert store.put_bytes(b"a bot in a bucket")[0] == sha
        keys = [o["Key"] for o in boto3.client("s3").list_objects(Bucket="arena-bots")["Contents"]]
        assert keys == [f"uploads/{sha[:2]}/{sha}"]
        assert store.fetch(sha, tmp_path / "downloads").read_bytes() == b"a bot in a bucket"
        with pytest.raises(StoredFileError, match="not in the bot store"):
            store.fetch("2" * 64, tmp_path / "downloads")
    finally:
        server.stop()
