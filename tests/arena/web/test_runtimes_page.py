"""The runtimes page, the starter kits' downloads and ``manage.py runtimes``."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command
from django.test import Client

from arena.bots import unpack
from arena.referee import runtimes
from arena.referee.bots import BotSpec
from arena.web.runtimes import _CACHE_KEY


@pytest.fixture(autouse=True)
def fresh_probe() -> Iterator[None]:
    """Each test starts without a cached probe, and leaves none behind."""
    cache.delete(_CACHE_KEY)
    yield
    cache.delete(_CACHE_KEY)


@pytest.mark.django_db
def test_the_page_lists_every_runtime_with_its_version_and_kit() -> None:
    r = Client().get("/runtimes/")
    assert r.status_code == 200
    page = r.content.decode()
    python = runtimes.probe([runtimes.by_key("python")])[0]
    assert python.ok
    assert f"<code>python3 --version</code>: {python.version}" in page
    for runtime in runtimes.RUNTIMES:
        assert f'<tr id="{runtime.key}">' in page
        assert f'href="/runtimes/{runtime.key}/starter.zip"' in page
        for command in runtime.commands:
            assert f"<code>{command} " in page
        for package in runtime.packages:
            assert f"<code>{package}</code>" in page
    assert "build: <code>javac -d out Main.java</code>" in page
    assert "run: <code>java -cp out Main</code>" in page


@pytest.mark.django_db
def test_the_page_shows_the_cached_probe_instead_of_probing_again() -> None:
    Client().get("/runtimes/")
    cached = cache.get(_CACHE_KEY)
    assert cached is not None and len(cached["runtimes"]) == len(runtimes.RUNTIMES)
    # What the page shows comes from the cache while it lasts: change it, and the page follows.
    cached["runtimes"][0]["tools"][0]["version"] = "9.99.1"
    cache.set(_CACHE_KEY, cached, 60)
    assert "python3 --version</code>: 9.99.1" in Client().get("/runtimes/").content.decode()


@pytest.mark.django_db
def test_a_missing_tool_is_shown_as_not_installed() -> None:
    Client().get("/runtimes/")
    cached = cache.get(_CACHE_KEY)
    go = next(r for r in cached["runtimes"] if r["key"] == "go")
    go["tools"][0].update(version="", path="", line="not installed")
    cache.set(_CACHE_KEY, cached, 60)
    page = Client().get("/runtimes/").content.decode()
    assert '<code>go version</code>: <span class="error">not installed</span>' in page


@pytest.mark.django_db
def test_the_upload_page_and_the_footer_link_to_the_runtimes(user: Any) -> None:
    c = Client()
    c.force_login(user)
    assert 'href="/runtimes/"' in c.get("/upload/").content.decode()
    assert 'href="/runtimes/"' in Client().get("/matches/").content.decode()


@pytest.mark.parametrize("runtime", runtimes.RUNTIMES, ids=lambda r: r.key)
def test_a_kit_downloads_as_a_zip_the_arena_accepts(
    runtime: runtimes.Runtime, tmp_path: Path
) -> None:
    r = Client().get(f"/runtimes/{runtime.key}/starter.zip")
    assert r.status_code == 200
    assert r["Content-Type"] == "application/zip"
    assert r["Content-Disposition"] == f'attachment; filename="yinsh-starter-{runtime.key}.zip"'
    data = r.content
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = [n.removeprefix(f"yinsh-starter-{runtime.key}/") for n in zf.namelist()]
    assert "bot.toml" in names
    assert sorted(names) == runtimes.kit_files(runtime)
    # The site takes it as an upload, and a worker unpacks it into the same bot.
    assert unpack.detect_kind(data[:512], f"yinsh-starter-{runtime.key}.zip") == unpack.ZIP
    archive = tmp_path / "kit.zip"
    archive.write_bytes(data)
    root = unpack.unpack_archive(archive, unpack.ZIP, tmp_path / "unpacked", unpack.Limits())
    spec = BotSpec.load(root)
    original = BotSpec.load(runtime.kit)
    assert (spec.name, spec.command, spec.build) == (
        original.name,
        original.command,
        original.build,
    )
    assert spec.digest == original.digest


def test_an_unknown_kit_is_not_found() -> None:
    for url in ("/runtimes/cobol/starter.zip", "/runtimes/..%2Fsdk/starter.zip"):
        assert Client().get(url).status_code == 404, url


def test_the_command_prints_a_table_with_python_found() -> None:
    out = io.StringIO()
    call_command("runtimes", stdout=out)
    text = out.getvalue()
    python = runtimes.probe([runtimes.by_key("python")])[0]
    line = next(x for x in text.splitlines() if x.startswith("Python"))
    assert line.split()[:5] == ["Python", "Python", "3", "python3", "--version"]
    assert python.version in line and python.tools[0].path in line
    for runtime in runtimes.RUNTIMES:
        assert any(x.startswith(runtime.language + " ") for x in text.splitlines()), runtime
    assert "runtimes available." in text


def test_the_command_prints_json() -> None:
    out = io.StringIO()
    call_command("runtimes", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["path"] == "/usr/local/bin:/usr/bin:/bin"
    assert [r["key"] for r in data["runtimes"]] == [r.key for r in runtimes.RUNTIMES]
    python = data["runtimes"][0]
    assert python["ok"] and python["tools"][0]["version"]


def test_the_command_check_fails_when_a_tool_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # A runtime list with a tool no host has: --check must say so and fail.
    ghost = runtimes.Runtime("ghost", "Ghost", "Ghost", (("no-such-compiler", "-v"),), ("ghost",))
    monkeypatch.setattr(
        "arena.local.management.commands.runtimes.RUNTIMES", (*runtimes.RUNTIMES, ghost)
    )
    with pytest.raises(CommandError, match="no-such-compiler -v"):
        call_command("runtimes", "--check", stdout=io.StringIO())


# ----------------------------------------------------------------------------- promises


@pytest.mark.django_db
def test_the_page_says_what_bots_may_use_and_marks_a_tool_too_old() -> None:
    page = Client().get("/runtimes/").content.decode()
    assert "<th>what bots may use</th>" in page
    assert '<div class="meta">1.85 or later</div>editions 2015 to 2024, let ... else' in page
    assert "no &lt;format&gt;" in page  # the C++ note, escaped
    cached = cache.get(_CACHE_KEY)
    rust = next(r for r in cached["runtimes"] if r["key"] == "rust")
    rust["tools"][0].update(version="1.63.0", line="rustc 1.63.0", too_old=True)
    cache.set(_CACHE_KEY, cached, 60)
    page = Client().get("/runtimes/").content.decode()
    assert '<code>rustc --version</code>: 1.63.0 <span class="error">older than 1.85</span>' in page


def fake_tool(folder: Path, name: str, output: str) -> None:
    path = folder / name
    path.write_text(f'#!/bin/sh\necho "{output}"\n')
    path.chmod(0o755)


def test_the_command_lists_what_bots_may_use() -> None:
    out = io.StringIO()
    call_command("runtimes", stdout=out)
    lines = out.getvalue().splitlines()
    start = lines.index("What bots may use, from the oldest version promised (docs/runtimes.md):")
    notes = lines[start + 1 :]
    assert [n.split()[0] for n in notes] == [r.language for r in runtimes.RUNTIMES]
    rust = next(n for n in notes if n.startswith("Rust "))
    assert rust.split()[1:4] == ["1.85", "or", "later"] and "Cargo.lock versions 3 and 4" in rust


def test_the_command_check_fails_when_a_tool_is_too_old(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake_tool(tmp_path, "rustc", "rustc 1.63.0")
    fake_tool(tmp_path, "cargo", "cargo 1.65.0")
    rust = runtimes.by_key("rust")
    monkeypatch.setattr("arena.local.management.commands.runtimes.RUNTIMES", (rust,))
    monkeypatch.setattr("arena.local.management.commands.runtimes.BOT_PATH", str(tmp_path))
    monkeypatch.setattr(
        "arena.local.management.commands.runtimes.probe",
        lambda chosen: runtimes.probe(chosen, path=str(tmp_path)),
    )
    out = io.StringIO()
    with pytest.raises(CommandError, match=r"rustc --version 1\.63\.0 \(older than 1\.85\)"):
        call_command("runtimes", "--check", stdout=out)
    assert "1.63.0 (older than 1.85)" in out.getvalue()
    assert "0 of 1 runtimes available." in out.getvalue()
