"""The README's examples run as written (only the interpreter's path is filled in)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def block_after(heading: str, language: str) -> str:
    section = README.split(heading, 1)[1]
    match = re.search(rf"```{language}\n(.*?)```", section, re.S)
    assert match, f"no {language} block after {heading!r}"
    return match.group(1)


@pytest.mark.slow  # matches, an SPRT run and a tournament of real bots
def test_the_local_play_examples_run(tmp_path: Path) -> None:
    script = block_after("## Playing locally", "sh").replace(".venv/bin/python", sys.executable)
    for name in ("bots", "manage.py"):
        (tmp_path / name).symlink_to(ROOT / name)
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "Score of search vs greedy" in run.stdout
    assert len(list((tmp_path / "games").glob("game-*.txt"))) == 4
    assert "result " in run.stdout  # engine replay printed the game's result
    assert "perft 2 6258" in run.stdout
    assert (tmp_path / "tour").is_dir()


def test_the_five_line_bot_passes_the_conformance_check(tmp_path: Path) -> None:
    bot = tmp_path / "mybot"
    bot.mkdir()
    (bot / "bot.toml").write_text('name = "mybot"\ncommand = "python3 main.py"\n')
    (bot / "main.py").write_text(block_after("## Writing a bot", "python"))
    run = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "checkbot", str(bot)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
