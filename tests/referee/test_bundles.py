"""The author's downloads: the SDK's zip and checkbot.pyz, the local checker, run as an author
runs it (a saved file, an isolated Python, a clean environment, outside the repository)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from arena.referee import bundles

ROOT = Path(__file__).resolve().parents[2]

#: A bot that answers hello with something that is not JSON.
GARBAGE_BOT = (
    'import sys\nsys.stdin.readline()\nprint("hello, referee", flush=True)\nsys.stdin.read()\n'
)


def test_the_sdk_zip_holds_the_sdk_and_the_engine_under_one_folder(tmp_path: Path) -> None:
    name, data = bundles.sdk_archive()
    assert name == "yinsh-sdk.zip"
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    for expected in (
        "yinsh-sdk/yinshbot/__init__.py",
        "yinsh-sdk/engine/__init__.py",
        "yinsh-sdk/engine/py.typed",
        "yinsh-sdk/pyproject.toml",
        "yinsh-sdk/README.txt",
    ):
        assert expected in names
    assert all(n.startswith("yinsh-sdk/") and "__pycache__" not in n for n in names)
    zipfile.ZipFile(io.BytesIO(data)).extractall(tmp_path)
    code = "import yinshbot, engine; print(len(engine.VARIANTS))"
    done = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, '.'); {code}"],
        cwd=tmp_path / "yinsh-sdk",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"


def test_the_archives_are_made_from_the_files_as_they_are_and_are_stable() -> None:
    assert bundles.sdk_archive() == bundles.sdk_archive()
    names = dict(bundles.checkbot_files())
    assert names["arena/referee/checker.py"] == ROOT / "arena/referee/checker.py"
    assert names["bots/random/main.py"] == ROOT / "bots/random/main.py"
    _, data = bundles.checkbot_archive()
    assert data.startswith(b"#!/usr/bin/env python3\n")
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert (
        archive.read("arena/referee/conformance.py")
        == (ROOT / "arena/referee/conformance.py").read_bytes()
    )
    assert "__main__.py" in archive.namelist()


@pytest.fixture
def checkbot(tmp_path: Path) -> Path:
    """checkbot.pyz, saved alone in a folder of its own."""
    folder = tmp_path / "download"
    folder.mkdir()
    name, data = bundles.checkbot_archive()
    (folder / name).write_bytes(data)
    return folder / name


def run_checkbot(pyz: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python3 -I checkbot.pyz ARGS`` with nothing of this environment but PATH."""
    assert not cwd.resolve().is_relative_to(ROOT)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(cwd)}
    return subprocess.run(
        [sys.executable, "-I", str(pyz), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_checkbot_passes_the_random_bot_copied_anywhere(checkbot: Path, tmp_path: Path) -> None:
    bot = tmp_path / "mybot"
    shutil.copytree(ROOT / "bots/random", bot, ignore=shutil.ignore_patterns("__pycache__"))
    done = run_checkbot(checkbot, str(bot), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "Variants: yinsh, blitz, yangsh, yangsh7" in lines
    assert lines[-1] == "ok    conformance: passed"
    # At least the games asked for, and one in each variant the bot declares.
    assert sum(line.startswith("ok    game ") for line in lines) == 4
    assert not any(line.startswith("FAIL") for line in lines)


def test_checkbot_fails_a_broken_bot_given_as_a_command_and_says_why(
    checkbot: Path, tmp_path: Path
) -> None:
    bot = tmp_path / "broken"
    bot.mkdir()
    (bot / "main.py").write_text(GARBAGE_BOT)
    done = run_checkbot(checkbot, "--", sys.executable, "main.py", cwd=bot)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL  start-up: broken broke the protocol" in done.stdout
    assert "not JSON" in done.stdout and "'hello, referee'" in done.stdout
    assert "FAIL  conformance: failed" in done.stdout
    assert done.stdout.rstrip().endswith("broken does not conform")


def test_checkbot_refuses_a_folder_that_is_not_a_bot(checkbot: Path, tmp_path: Path) -> None:
    done = run_checkbot(checkbot, str(tmp_path), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout.startswith("checkbot: ") and "bot.toml" in done.stdout
