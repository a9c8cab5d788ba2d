"""Builds from source (arena.referee.build) through the real sandbox: what a build may do, what
it may not, and what it leaves for the bot to run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from arena.referee import GameConfig, Referee, TimeControl
from arena.referee.bots import BotSpec
from arena.referee.build import Builder, BuildFailed, BuildLimits
from tests.conftest import skip_unless_required

from .games import BOTS, TEST_BOTS


def make_bot(folder: Path, build: str, files: dict[str, str] | None = None) -> BotSpec:
    folder.mkdir(parents=True)
    (folder / "bot.toml").write_text(f'name = "built"\ncommand = "./bot"\nbuild = """{build}"""\n')
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return BotSpec.load(folder)


def needs_cc() -> None:
    if shutil.which("cc") is None:
        skip_unless_required("no C compiler (cc) on this host")


@pytest.fixture
def builder(full_sandbox, tmp_path):
    def make(**limits) -> Builder:
        return Builder(full_sandbox(), tmp_path / "builds", BuildLimits(**limits))

    return make


# Plays the first legal action it is given: enough protocol to play a whole game.
FIRST_ACTION_C = r"""
#include <stdio.h>
#include <string.h>
int main(void) {
    static char line[1 << 20];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"hello\"")) {
            puts("{\"type\":\"ready\",\"name\":\"first\"}");
        } else if (strstr(line, "\"type\":\"request\"")) {
            char *a = strstr(line, "\"actions\":[\"") + 12;
            *strchr(a, '"') = 0;
            printf("{\"type\":\"action\",\"action\":\"%s\"}\n", a);
        } else {
            return 0;
        }
        fflush(stdout);
    }
    return 0;
}
"""


def c_bot(tmp_path: Path) -> BotSpec:
    return make_bot(
        tmp_path / "c", "cc -O2 -o bot main.c && echo compiled it", {"main.c": FIRST_ACTION_C}
    )


def test_a_c_bot_is_built_once_and_plays_from_its_built_folder(builder, tmp_path):
    needs_cc()
    spec = c_bot(tmp_path)
    assert spec.needs_build
    b = builder()
    first = b.build(spec)
    assert not first.cached and first.spec.built and not first.spec.needs_build
    assert "compiled it" in first.log
    assert first.spec.digest == spec.digest  # the version's identity is its source
    assert first.spec.path == tmp_path / "builds" / spec.digest / "bot"
    assert os.access(first.spec.path / "bot", os.X_OK)
    assert not (spec.folder / "bot").exists()  # the uploaded folder is never written
    again = b.build(spec)
    assert again.cached and again.spec.path == first.spec.path and "compiled it" in again.log

    config = GameConfig("yinsh", first.spec, BotSpec.load(BOTS / "random"), TimeControl(10_000, 0))
    result = Referee(b.sandbox).play(config)
    assert result.fault is None and result.outcome.result is not None, result.reason


def test_a_bot_with_a_build_cannot_play_unbuilt(full_sandbox, tmp_path):
    spec = make_bot(tmp_path / "b", "true")
    config = GameConfig("yinsh", spec, BotSpec.load(BOTS / "random"), TimeControl(10_000, 0))
    with pytest.raises(ValueError, match="must be built before it plays"):
        Referee(full_sandbox()).play(config)


def test_a_failed_build_says_why_with_its_output(builder, tmp_path):
    needs_cc()
    spec = make_bot(
        tmp_path / "b", "cc -o bot main.c", {"main.c": "int main(void) { return nope; }\n"}
    )
    b = builder()
    with pytest.raises(BuildFailed) as failed:
        b.build(spec)
    assert failed.value.reason == "the build command failed (exit code 1)"
    assert "nope" in failed.value.log and "main.c" in failed.value.log
    assert not (tmp_path / "builds" / spec.digest).exists()  # a failure is not cached


def test_a_build_has_no_network_and_cannot_touch_the_host(builder, tmp_path):
    script = (
        "python3 - <<'EOF'\n"
        "import socket\n"
        "for host, port in (('127.0.0.1', 6379), ('127.0.0.1', 5432), ('1.1.1.1', 443)):\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=2)\n"
        "        print('CONNECTED', host, port)\n"
        "    except OSError as e:\n"
        "        print('refused', host, port, type(e).__name__)\n"
        "EOF\n"
        "touch /src/written-in-source 2>/dev/null && echo WROTE-SOURCE\n"
        "touch /usr/written 2>/dev/null && echo WROTE-USR\n"
        "printf '#!/bin/sh\\nexit 0\\n' > bot && chmod +x bot && echo done"
    )
    spec = make_bot(tmp_path / "b", script)
    built = builder().build(spec)
    assert "done" in built.log
    assert "CONNECTED" not in built.log and "WROTE" not in built.log, built.log
    assert built.log.count("refused") == 3, built.log
    assert not (spec.folder / "written-in-source").exists()


def test_a_build_that_runs_too_long_is_stopped(builder, tmp_path):
    spec = make_bot(tmp_path / "b", "echo started; sleep 60")
    with pytest.raises(BuildFailed) as failed:
        builder(seconds=2).build(spec)
    assert failed.value.reason == "the build took longer than 2 s"
    assert "started" in failed.value.log


def test_a_build_that_fills_its_folder_is_stopped(builder, tmp_path):
    spec = make_bot(tmp_path / "b", "head -c 40M /dev/zero > big && echo wrote it")
    with pytest.raises(BuildFailed) as failed:
        builder(disk_mb=16).build(spec)
    assert "No space left" in failed.value.log or "File size" in failed.value.reason
    assert "wrote it" not in failed.value.log


def test_a_build_that_eats_memory_is_stopped(builder, tmp_path):
    spec = make_bot(tmp_path / "b", "python3 -c 'x = bytearray(400 << 20); print(len(x))'")
    with pytest.raises(BuildFailed) as failed:
        builder(memory_mb=128).build(spec)
    assert failed.value.reason.startswith("the build was stopped by the sandbox: memory")


def test_a_build_cannot_forge_its_result_beyond_the_rules(builder, tmp_path):
    """The result stream is untrusted: links out of the folder, devices and absolute paths
    never reach the host, whatever the build writes on the stream's descriptor."""
    script = (
        "ln -s /etc/shadow escape && mkdir -p sub && ln -s ../../../../etc sub/up && "
        "printf '#!/bin/sh\\n' > bot && chmod 4755 bot"
    )
    spec = make_bot(tmp_path / "b", script)
    with pytest.raises(BuildFailed, match="could not be read"):
        builder().build(spec)
    assert not any((tmp_path / "builds").glob("*/bot"))


def test_the_build_output_is_bounded_and_keeps_its_end(builder, tmp_path):
    spec = make_bot(
        tmp_path / "b",
        "i=0; while [ $i -lt 20000 ]; do echo line $i; i=$((i+1)); done; echo last; exit 3",
    )
    with pytest.raises(BuildFailed) as failed:
        builder(log_bytes=4096).build(spec)
    assert failed.value.reason == "the build command failed (exit code 3)"
    assert failed.value.log.endswith("last\n") and len(failed.value.log) <= 4096


def test_a_bot_without_a_build_is_itself(builder):
    spec = BotSpec.load(BOTS / "random")
    assert builder().build(spec).spec is spec


def test_a_trusted_bot_builds_without_a_sandbox_too(unsandboxed, tmp_path):
    folder = tmp_path / "b"
    make_bot(folder, "printf '#!/bin/sh\\necho {}\\n' > bot && chmod +x bot && echo made")
    spec = BotSpec.load(folder, trusted=True)
    built = Builder(unsandboxed(), tmp_path / "builds").build(spec)
    assert "made" in built.log and os.access(built.spec.path / "bot", os.X_OK)
    assert not (folder / "bot").exists()


# ----------------------------------------------------------------------------- the result's size


def test_a_build_that_leaves_more_than_a_built_bot_may_hold_fails(builder, tmp_path):
    """The folder may fill up during the build (``disk_mb``); what is left at its end is kept
    in every worker's cache, so it has a limit of its own (``output_mb``)."""
    spec = make_bot(
        tmp_path / "b",
        "head -c 3M /dev/zero > big && printf '#!/bin/sh\\n' > bot && chmod +x bot && echo wrote",
    )
    with pytest.raises(BuildFailed) as failed:
        builder(output_mb=2).build(spec)
    assert failed.value.reason == (
        "the build left more than 2 MiB in the bot's folder, the most a built bot may hold"
    )
    assert "wrote" in failed.value.log
    assert list((tmp_path / "builds").iterdir()) == []  # nothing kept


def test_a_build_may_use_more_room_than_it_leaves(builder, tmp_path):
    spec = make_bot(
        tmp_path / "b",
        "head -c 3M /dev/zero > scratch && rm scratch && head -c 1500000 /dev/zero > data && "
        "printf '#!/bin/sh\\n' > bot && chmod +x bot",
    )
    b = builder(output_mb=2)
    built = b.build(spec)
    files = [p for p in built.spec.path.rglob("*") if p.is_file()]
    assert built.size == sum(p.stat().st_size for p in files) > 1_500_000
    assert b.build(spec).size == built.size  # from the cache, the same


# ----------------------------------------------------------------------------- hard links


def test_hard_links_a_build_makes_are_kept_as_plain_copies(builder, tmp_path, full_sandbox):
    """``ln main.py hard`` used to drop both names: the bot could not start."""
    folder = tmp_path / "b"
    shutil.copytree(BOTS / "random", folder)
    manifest = folder / "bot.toml"
    manifest.write_text(
        manifest.read_text() + 'build = "mkdir sub && ln main.py hard && ln main.py sub/again"\n'
    )
    spec = BotSpec.load(folder)
    built = builder().build(spec)
    source = (folder / "main.py").read_bytes()
    for name in ("main.py", "hard", "sub/again"):
        path = built.spec.path / name
        assert path.is_file() and not path.is_symlink(), name
        assert path.stat().st_nlink == 1 and path.read_bytes() == source, name
    config = GameConfig("yinsh", built.spec, BotSpec.load(BOTS / "random"), TimeControl(10_000, 0))
    result = Referee(full_sandbox()).play(config)
    assert result.fault is None and result.outcome.result is not None, result.reason


def test_a_build_cannot_hard_link_a_file_from_outside_its_folder(builder, tmp_path):
    """Its folder is a file system of its own: a hard link into it can only name a file the
    build made there (or copied from its own source)."""
    outside = ("/etc/passwd", "/usr/bin/env", "/src/bot.toml", "/tmp/scratch", "/proc/self/exe")
    script = "touch /tmp/scratch\n" + "".join(
        f"ln {path} leak{i} || echo REFUSED {path}\n" for i, path in enumerate(outside)
    )
    script += "ln bot.toml mine && printf '#!/bin/sh\\n' > bot && chmod +x bot"
    spec = make_bot(tmp_path / "b", script)
    built = builder().build(spec)
    assert built.log.count("REFUSED") == len(outside), built.log
    assert built.log.count("Invalid cross-device link") == len(outside), built.log
    assert not list(built.spec.path.glob("leak*"))
    assert (built.spec.path / "mine").read_bytes() == (spec.folder / "bot.toml").read_bytes()


def test_a_forged_hard_link_in_the_result_fails_the_build(unsandboxed, tmp_path):
    """The result stream is untrusted: where the build runs as the referee's own user (here a
    trusted bot, built without a sandbox) it can write its own tar on it, through
    /proc/PID/fd of the shell that packs the result. A hard link in the result may only name
    a file that comes before it in the same stream; one to a host file fails the build."""
    spec = BotSpec.load(TEST_BOTS / "hostile" / "build-forged-hard-link", trusted=True)
    with pytest.raises(BuildFailed) as failed:
        Builder(unsandboxed(), tmp_path / "builds").build(spec)
    assert failed.value.reason == (
        "the build's result could not be read: the hard link 'leak' names '/etc/passwd', "
        "which is not a file before it in the result"
    )
    assert "forged" in failed.value.log  # its stream did get in
    assert list((tmp_path / "builds").iterdir()) == []


def test_a_sandboxed_build_cannot_reach_its_result_stream(builder):
    """In the full sandbox the build runs as a user of its own, and the stream's pipe is the
    referee's: the same forgery is refused."""
    spec = BotSpec.load(TEST_BOTS / "hostile" / "build-forged-hard-link")
    with pytest.raises(BuildFailed) as failed:
        builder().build(spec)
    assert failed.value.reason == "the build command failed (exit code 1)"
    assert "Permission denied" in failed.value.log and "forged" not in failed.value.log


# ----------------------------------------------------------------------------- the cache folder


def test_a_failed_build_leaves_nothing_in_the_cache_folder(builder, tmp_path):
    spec = make_bot(tmp_path / "b", "echo no; exit 2")
    with pytest.raises(BuildFailed):
        builder().build(spec)
    assert list((tmp_path / "builds").iterdir()) == []


def test_a_build_leaves_only_its_entry_in_the_cache_folder(builder, tmp_path):
    spec = make_bot(tmp_path / "b", "printf '#!/bin/sh\\n' > bot && chmod +x bot")
    b = builder()
    b.build(spec)
    b.build(spec)  # from the cache
    assert [p.name for p in (tmp_path / "builds").iterdir()] == [spec.digest]
