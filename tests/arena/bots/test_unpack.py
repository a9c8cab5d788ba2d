"""Recognising uploads (web process) and unpacking them safely (workers): no database."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.bots.unpack import (
    FILE,
    TARGZ,
    ZIP,
    Limits,
    StoredFileError,
    UnpackError,
    UploadError,
    detect_kind,
    ensure_unpacked,
    safe_filename,
    unpack_archive,
)
from tests.arena.conftest import BOTS, packed, targz, zipped, zipped_folder

LIMITS = Limits(max_files=50, max_bytes=1024 * 1024, max_ratio=100)
MANIFEST = b'name = "t"\ncommand = "python3 main.py"\n'


def write(tmp_path: Path, data: bytes, name: str = "upload") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def everything_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


# ----------------------------------------------------------------------------- detect_kind


@pytest.mark.parametrize(
    ("head", "name", "kind"),
    [
        (b"PK\x03\x04....", "bot.zip", ZIP),
        (b"\x1f\x8b\x08\x00", "bot.tar.gz", TARGZ),
        (b"\x1f\x8b\x08\x00", "bot.tgz", TARGZ),
        (b"#!/usr/bin/env python3\n", "mybot", FILE),
        (b"\x7fELF\x02\x01", "engine", FILE),
        (b"PK\x03\x04", "noext", ZIP),
    ],
)
def test_detect_kind_accepts_the_supported_types(head: bytes, name: str, kind: str) -> None:
    assert detect_kind(head, name) == kind


@pytest.mark.parametrize(
    ("head", "name", "message"),
    [
        (b"", "bot.zip", "empty"),
        (b"hello", "bot.zip", "not a zip archive"),
        (b"PK\x05\x06", "bot.zip", "empty zip"),
        (b"hello", "bot.tar.gz", "not a gzip"),
        (b"Rar!\x1a\x07", "bot.rar", "RAR"),
        (b"7z\xbc\xaf\x27\x1c", "bot.7z", "7-Zip"),
        (b"BZh91AY", "bot.tar.bz2", "bzip2"),
        (b"ustar...", "bot.tar", "only .zip and .tar.gz"),
        (b"print('hi')\n", "bot.py", "single executable file"),
    ],
)
def test_detect_kind_refuses_other_types_with_a_clear_message(
    head: bytes, name: str, message: str
) -> None:
    with pytest.raises(UploadError, match=message):
        detect_kind(head, name)


def test_safe_filename_keeps_no_folders_and_no_odd_characters() -> None:
    assert safe_filename("../../etc/passwd") == "passwd"
    assert safe_filename("C:\\bots\\my bot.py") == "my_bot.py"
    assert safe_filename(".hidden") == "hidden"
    assert safe_filename("") == "bot"


# ----------------------------------------------------------------------------- good archives


def test_a_zip_of_a_bot_folder_unpacks_to_that_folder(tmp_path: Path) -> None:
    archive = write(tmp_path, zipped_folder(BOTS / "random"))
    root = unpack_archive(archive, ZIP, tmp_path / "out", LIMITS)
    assert (root / "bot.toml").is_file() and (root / "main.py").is_file()
    assert root == tmp_path / "out"


def test_a_single_top_level_folder_is_the_bot(tmp_path: Path) -> None:
    data = zipped({"mybot/bot.toml": MANIFEST, "mybot/main.py": b"print()\n"})
    root = unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)
    assert root == tmp_path / "out" / "mybot"


def test_a_tar_gz_keeps_executable_bits_and_nothing_else(tmp_path: Path) -> None:
    script = tarfile.TarInfo("run.sh")
    script.size = 10
    script.mode = 0o4777  # setuid and world-writable in the archive
    manifest = tarfile.TarInfo("bot.toml")
    manifest.size = len(MANIFEST)
    data = targz([(script, b"#!/bin/sh\n"), (manifest, MANIFEST)])
    root = unpack_archive(write(tmp_path, data), TARGZ, tmp_path / "out", LIMITS)
    assert stat.S_IMODE((root / "run.sh").stat().st_mode) == 0o755
    assert stat.S_IMODE((root / "bot.toml").stat().st_mode) == 0o644


# ----------------------------------------------------------------------------- hostile archives


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("../evil.py", "path traversal"),
        ("bot/../../evil.py", "path traversal"),
        ("/etc/evil", "absolute path"),
        ("C:/evil", "absolute path"),
        ("bot\\..\\evil", "backslash"),
    ],
)
def test_zip_entries_that_could_escape_are_refused(tmp_path: Path, name: str, message: str) -> None:
    data = zipped({"bot.toml": MANIFEST, name: b"x"})
    with pytest.raises(UnpackError, match=message):
        unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)
    assert not (tmp_path / "evil.py").exists()
    assert not (tmp_path.parent / "evil.py").exists()


def test_tar_entries_that_could_escape_are_refused(tmp_path: Path) -> None:
    info = tarfile.TarInfo("../../escaped")
    info.size = 1
    manifest = tarfile.TarInfo("bot.toml")
    manifest.size = len(MANIFEST)
    data = targz([(manifest, MANIFEST), (info, b"x")])
    with pytest.raises(UnpackError, match="path traversal"):
        unpack_archive(write(tmp_path, data), TARGZ, tmp_path / "out", LIMITS)
    assert everything_under(tmp_path / "out") == set()  # nothing written before the check


def test_a_tar_entry_whose_name_is_not_utf8_is_refused(tmp_path: Path) -> None:
    """A name in another encoding (Latin-1 here) would be unpacked under an undecodable name
    and then break the hashing of the bot's files; it is refused with a message."""
    manifest = tarfile.TarInfo("bot.toml")
    manifest.size = len(MANIFEST)
    odd = tarfile.TarInfo("caf\xe9.txt")
    odd.size = 1
    buf = io.BytesIO()
    with tarfile.open(
        fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT, encoding="latin-1"
    ) as tf:
        tf.addfile(manifest, io.BytesIO(MANIFEST))
        tf.addfile(odd, io.BytesIO(b"x"))
    with pytest.raises(UnpackError, match="not UTF-8"):
        unpack_archive(write(tmp_path, buf.getvalue()), TARGZ, tmp_path / "out", LIMITS)
    assert everything_under(tmp_path / "out") == set()


def test_zip_symlinks_are_refused(tmp_path: Path) -> None:
    data = zipped(
        {"bot.toml": MANIFEST, "link": "/etc/passwd"}, modes={"link": stat.S_IFLNK | 0o777}
    )
    with pytest.raises(UnpackError, match="symbolic link"):
        unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        (tarfile.SYMTYPE, "symbolic link"),
        (tarfile.LNKTYPE, "hard link"),
        (tarfile.CHRTYPE, "device"),
        (tarfile.BLKTYPE, "device"),
        (tarfile.FIFOTYPE, "special file"),
    ],
)
def test_tar_links_and_devices_are_refused(tmp_path: Path, kind: bytes, message: str) -> None:
    info = tarfile.TarInfo("thing")
    info.type = kind
    info.linkname = "/etc/shadow"
    manifest = tarfile.TarInfo("bot.toml")
    manifest.size = len(MANIFEST)
    data = targz([(manifest, MANIFEST), (info, None)])
    with pytest.raises(UnpackError, match=message):
        unpack_archive(write(tmp_path, data), TARGZ, tmp_path / "out", LIMITS)


def test_a_zip_bomb_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bot.toml", MANIFEST)
        zf.writestr("zeros", b"\0" * (5 * 1024 * 1024))
    limits = Limits(max_files=50, max_bytes=100 * 1024 * 1024, max_ratio=100)
    with pytest.raises(UnpackError, match="compression ratio"):
        unpack_archive(write(tmp_path, buf.getvalue()), ZIP, tmp_path / "out", limits)
    assert everything_under(tmp_path / "out") == set()


def test_a_gzip_bomb_is_refused(tmp_path: Path) -> None:
    info = tarfile.TarInfo("zeros")
    info.size = 5 * 1024 * 1024
    data = targz([(info, b"\0" * info.size)])
    limits = Limits(max_files=50, max_bytes=100 * 1024 * 1024, max_ratio=100)
    with pytest.raises(UnpackError, match="compression ratio"):
        unpack_archive(write(tmp_path, data), TARGZ, tmp_path / "out", limits)


def test_too_many_files_are_refused(tmp_path: Path) -> None:
    data = zipped({f"f{i}": b"x" for i in range(60)})
    with pytest.raises(UnpackError, match="60 files"):
        unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)


def test_too_many_bytes_are_refused(tmp_path: Path) -> None:
    import os

    data = zipped({"bot.toml": MANIFEST, "big": os.urandom(2 * 1024 * 1024)})
    with pytest.raises(UnpackError, match="unpacks to"):
        unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)


def test_a_zip_entry_whose_header_lies_about_its_size_is_refused(tmp_path: Path) -> None:
    data = bytearray(zipped({"bot.toml": MANIFEST, "a": b"y" * 4000}))
    # Shrink the declared uncompressed size in the central directory of "a".
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")
    with pytest.raises(UnpackError):
        unpack_archive(write(tmp_path, bytes(data)), ZIP, tmp_path / "out", LIMITS)


def test_an_archive_without_bot_toml_is_refused(tmp_path: Path) -> None:
    data = zipped({"main.py": b"print()\n", "lib/util.py": b""})
    with pytest.raises(UnpackError, match=r"no bot\.toml"):
        unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)


def test_a_corrupt_archive_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnpackError, match="not a readable"):
        unpack_archive(write(tmp_path, b"PK\x03\x04garbage"), ZIP, tmp_path / "out", LIMITS)
    with pytest.raises(UnpackError, match="not a readable"):
        unpack_archive(write(tmp_path, b"\x1f\x8bgarbage"), TARGZ, tmp_path / "o2", LIMITS)


def test_names_given_twice_are_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("bot.toml", MANIFEST)
        with pytest.warns(UserWarning):
            zf.writestr("bot.toml", b"other")
    with pytest.raises(UnpackError, match="given twice"):
        unpack_archive(write(tmp_path, buf.getvalue()), ZIP, tmp_path / "out", LIMITS)


# ----------------------------------------------------------------------------- the cache


def test_the_cache_unpacks_once_per_hash_and_loads_the_spec(tmp_path: Path) -> None:
    import hashlib

    data = packed(BOTS / "random")
    sha = hashlib.sha256(data).hexdigest()
    archive = write(tmp_path, data, "stored")
    spec = ensure_unpacked(
        archive, sha256=sha, kind=TARGZ, filename="r.tar.gz", cache=tmp_path / "c", limits=LIMITS
    )
    assert spec.name == "random" and spec.command == ("python3", "main.py")
    assert spec.path == tmp_path / "c" / sha / "bot"
    archive.unlink()  # a second call does not need the stored file
    again = ensure_unpacked(
        archive, sha256=sha, kind=TARGZ, filename="r.tar.gz", cache=tmp_path / "c", limits=LIMITS
    )
    assert again.digest == spec.digest


def test_a_refused_archive_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    import hashlib

    data = zipped({"bot.toml": MANIFEST, "../x": b"x"})
    sha = hashlib.sha256(data).hexdigest()
    with pytest.raises(UnpackError):
        ensure_unpacked(
            write(tmp_path, data),
            sha256=sha,
            kind=ZIP,
            filename="b.zip",
            cache=tmp_path / "c",
            limits=LIMITS,
        )
    assert list((tmp_path / "c").iterdir()) == []


def test_a_bad_manifest_is_an_unpack_error_naming_the_file(tmp_path: Path) -> None:
    import hashlib

    data = zipped({"bot.toml": b'name = "x"\n'})
    sha = hashlib.sha256(data).hexdigest()
    with pytest.raises(UnpackError, match=r"bot\.toml: command is missing"):
        ensure_unpacked(
            write(tmp_path, data),
            sha256=sha,
            kind=ZIP,
            filename="b.zip",
            cache=tmp_path / "c",
            limits=LIMITS,
        )


def test_a_damaged_store_file_is_an_infrastructure_error(tmp_path: Path) -> None:
    data = packed(BOTS / "random")
    with pytest.raises(StoredFileError, match="no longer match"):
        ensure_unpacked(
            write(tmp_path, data),
            sha256="0" * 64,
            kind=TARGZ,
            filename="b.tar.gz",
            cache=tmp_path / "c",
            limits=LIMITS,
        )
    with pytest.raises(StoredFileError, match="not in the bot store"):
        ensure_unpacked(
            tmp_path / "missing",
            sha256="1" * 64,
            kind=TARGZ,
            filename="b.tar.gz",
            cache=tmp_path / "c",
            limits=LIMITS,
        )


def test_a_single_file_bot_is_made_executable(tmp_path: Path) -> None:
    import hashlib

    data = b"#!/bin/sh\necho hi\n"
    sha = hashlib.sha256(data).hexdigest()
    spec = ensure_unpacked(
        write(tmp_path, data),
        sha256=sha,
        kind=FILE,
        filename="../my bot.sh",
        cache=tmp_path / "c",
        limits=LIMITS,
    )
    assert spec.path.name == "my_bot.sh"
    assert spec.path.stat().st_mode & 0o111


# ----------------------------------------------------------------------------- hostile uploads
# Whatever a bot's own files hold, the unpacker and the manifest reader answer with an
# UnpackError (a rejection with its reason), never another exception: any other is taken for
# the machine's fault, and the version would be held for an operator instead of rejected.


def cached(tmp_path: Path, data: bytes, kind: str = ZIP) -> object:
    import hashlib

    return ensure_unpacked(
        write(tmp_path, data),
        sha256=hashlib.sha256(data).hexdigest(),
        kind=kind,
        filename="b.zip" if kind == ZIP else "b.tar.gz",
        cache=tmp_path / "c",
        limits=LIMITS,
    )


def test_a_manifest_nested_too_deeply_is_refused_with_its_reason(tmp_path: Path) -> None:
    """tomllib reads nested arrays by recursion: 5,000 of them overflow Python's stack."""
    data = zipped({"bot.toml": MANIFEST + b"deep = " + b"[" * 5000 + b"\n", "main.py": b""})
    with pytest.raises(UnpackError, match=r"bot\.toml: nested too deeply"):
        cached(tmp_path, data)
    assert list((tmp_path / "c").iterdir()) == []


def zip_with_name_bytes(name: bytes) -> bytes:
    """A zip whose one entry has the UTF-8 flag and the raw ``name`` (any bytes): written with
    a non-ASCII stand-in of that length (which sets the flag), then swapped."""
    stand_in = "é" * (len(name) // 2) + "a" * (len(name) % 2)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(stand_in, b"x")
    data = buf.getvalue()
    assert data.count(stand_in.encode()) == 2  # the local header and the central directory
    return data.replace(stand_in.encode(), name)


def test_an_entry_name_that_is_not_the_utf8_it_claims_is_refused(tmp_path: Path) -> None:
    data = zip_with_name_bytes(b"caf\xff\xfeQQ.txt")
    with pytest.raises(UnpackError, match="not a readable zip archive"):
        unpack_archive(write(tmp_path, data), ZIP, tmp_path / "out", LIMITS)
    with pytest.raises(UnpackError):
        cached(tmp_path, data)


#: The properties' examples: the same 300 on every run (a property test that found a new case
#: only some runs would be a flaky test).
PROPERTY = settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)


def valid_archives() -> dict[str, bytes]:
    files = {"bot.toml": MANIFEST, "main.py": b"print('hi')\n" * 20, "lib/a.py": b"x = 1\n"}
    members = []
    for name, content in files.items():
        info = tarfile.TarInfo(name)
        info.size = len(content)
        members.append((info, content))
    return {ZIP: zipped(files), TARGZ: targz(members)}


def only_unpack_errors(tmp_path: Path, data: bytes, kind: str) -> None:
    """Unpack and load ``data`` as the worker does: a bot spec, or an UnpackError."""
    import shutil

    try:
        cached(tmp_path, data, kind)
    except UnpackError:
        pass
    finally:
        shutil.rmtree(tmp_path / "c", ignore_errors=True)


@pytest.mark.slow
@pytest.mark.parametrize("kind", [ZIP, TARGZ])
def test_damaged_archives_are_only_ever_refused(tmp_path_factory: Any, kind: str) -> None:
    """Property: a valid archive with bytes overwritten, cut short or grown, and arbitrary
    bytes, unpack to a bot or to an UnpackError, nothing else."""
    base = valid_archives()[kind]

    @PROPERTY
    @given(
        edits=st.lists(
            st.tuples(st.integers(0, len(base) - 1), st.binary(min_size=1, max_size=8)),
            max_size=6,
        ),
        cut=st.integers(0, len(base)),
        tail=st.binary(max_size=64),
    )
    def check(edits: list[tuple[int, bytes]], cut: int, tail: bytes) -> None:
        data = bytearray(base)
        for at, new in edits:
            data[at : at + len(new)] = new
        only_unpack_errors(tmp_path_factory.mktemp("u"), bytes(data[:cut]) + tail, kind)

    check()


@pytest.mark.slow
def test_arbitrary_manifests_are_read_or_refused(tmp_path_factory: Any) -> None:
    """Property: whatever ``bot.toml`` holds (text, bytes, nesting), loading it gives a bot
    spec or an UnpackError, nothing else."""
    toml_ish = st.lists(
        st.sampled_from(["[", "]", "{", "}", "=", ",", '"', "'", "a", "1", "\n", " ", "."]),
        max_size=400,
    ).map("".join)
    nested = st.integers(1, 20_000).map(lambda n: "x = " + "[" * n)
    tables = st.integers(1, 5_000).map(lambda n: "x = " + "{a = " * n)

    @PROPERTY
    @given(
        body=st.one_of(
            st.binary(max_size=300),
            st.text(max_size=300).map(str.encode),
            toml_ish.map(str.encode),
            nested.map(str.encode),
            tables.map(str.encode),
        ),
        prefix=st.booleans(),
    )
    def check(body: bytes, prefix: bool) -> None:
        manifest = (MANIFEST if prefix else b"") + body
        only_unpack_errors(
            tmp_path_factory.mktemp("m"), zipped({"bot.toml": manifest, "main.py": b""}), ZIP
        )

    check()
