"""Hostile bots (tests/data/bots/hostile/) in real sandboxed matches against the random bot.

Most hostile bots do their act at start-up and report what happened as JSON lines; they do not
speak the protocol. Each is played through a small adapter (copied beside it) that reads
``hello``, runs the hostile ``main.py`` in its own process with its reports sent to standard
error, then exits with status 1. So every hostile bot loses: by ``sandbox-violation`` (with the
sandbox's message) where the sandbox stopped it, else by ``crash`` with the report of the
failed attempt in the stderr tail. The fixtures check that nothing of any bot is left. The
bots in ``SPEAKING`` speak the protocol themselves: their act is in the game.

Honest bots play normally in the same sandbox: the Python bots of bots/ and a compiled one.
"""

import base64
import json
import os
import platform
import re
import shutil
import subprocess
import urllib.parse
from pathlib import Path

import pytest

import engine
from arena.referee.bots import BotSpec
from arena.referee.outcomes import Failure
from arena.referee.sandbox import Sandbox, processes_of_uids
from tests.conftest import games_uids, skip_unless_required

from .conftest import HostListeners
from .games import ROOT, TEST_BOTS, builtin, check_record, play

HOSTILE = TEST_BOTS / "hostile"

ADAPTER = '''\
"""Protocol adapter: read hello, run the hostile main.py here, its output to stderr, then fail."""
import io
import os
import runpy
import sys
import traceback

sys.stdin.readline()
protocol_output = os.dup(1)  # kept open: the act's end is its exit, not the end of output
os.dup2(2, 1)
sys.stdin = io.StringIO("")
try:
    runpy.run_path("main.py", run_name="__main__")
except SystemExit:
    pass
except BaseException:
    traceback.print_exc()
sys.stdout.flush()
print("adapter: the hostile act is over", file=sys.stderr, flush=True)
sys.exit(1)
'''

# Where the sandbox stops the act, the violation kind; None where the act fails by itself.
EXPECTED = {
    "big_file": "file_size",
    "cpu_fork_chain": "cpu",
    "escape_syscalls": None,
    "foreign_abi": "forbidden_syscall",
    "fork_bomb": "processes",
    "host_paths": None,
    "memory_hog": "memory",
    "network_client": None,
    "orphan": None,
    "snoop": None,
    "write_outside": None,
}
# What the stderr tail must show of a failed attempt (the bot's own report).
REPORTS = {
    "escape_syscalls": '"unshare(CLONE_NEWUSER)": "EPERM"',
    "host_paths": '"act": "host_paths"',
    "orphan": '"act": "orphan"',
    "network_client": '"reached": []',
    "snoop": '"act": "snoop"',
    "write_outside": '"/usr": "EROFS"',
}
# Hostile bots that speak the protocol (played as they are, each by a test of its own).
SPEAKING = {"close_stdout"}


def adapted(name: str, tmp_path: Path) -> BotSpec:
    folder = tmp_path / name
    shutil.copytree(HOSTILE / name, folder)
    (folder / "adapter.py").write_text(ADAPTER)
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = "python3 adapter.py"\n')
    for p in (folder, *folder.iterdir()):
        p.chmod(0o755)
    return BotSpec.load(folder)


@pytest.fixture
def secret(tmp_path):
    """A server secret: a root-only file on the host."""
    path = tmp_path / "server-secret.txt"
    path.write_text("SECRET-KEY-THAT-MUST-NOT-LEAK")
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_hostile_bot_loses_and_leaves_nothing_behind(
    full_sandbox, tmp_path, secret, host_listeners: HostListeners, name
):
    # Every hostile bot is played here, but those that attack the build (test_build.py).
    here = [p.name for p in HOSTILE.iterdir() if p.is_dir() and not p.name.startswith("build-")]
    assert sorted(here) == sorted([*EXPECTED, *SPEAKING])
    if name == "foreign_abi" and platform.machine() != "x86_64":
        pytest.skip("only an x86_64 kernel has a foreign system call ABI to try")
    mark = f"hostile-mark-{os.getpid()}-{name}"
    env = {"MARK": mark}
    if name == "snoop":  # what it tries to read: host paths this test hands it itself
        env["TARGETS"] = json.dumps([str(secret), str(builtin("greedy").path / "main.py")])
    if name == "network_client":
        # The folder of the host's socket file is bound in (the sandbox binds a copy without
        # it); its host path is in what this test hands the bot.
        env.update(host_listeners.env(unix_paths=("/opt/hostile/sockets/server.sock",)))
    box = full_sandbox(
        cpu_seconds=3.0,
        memory_mb=128,
        env=tuple(env.items()),
        readonly_paths=((str(host_listeners.unix_path.parent), "/opt/hostile/sockets"),),
    )
    result = play(box, adapted(name, tmp_path), builtin("random"), startup_timeout_s=60.0)
    white = result.transcript["players"]["white"]
    assert result.outcome.result is engine.Result.BLACK, result.reason
    assert result.fault == "white"
    kind = EXPECTED[name]
    if kind is not None:
        assert result.outcome.termination is Failure.SANDBOX, result.reason
        assert result.reason.startswith("white was stopped by the sandbox: ")
        assert f"({kind})" in result.reason
    else:
        assert result.outcome.termination is Failure.CRASH, result.reason
        assert "white exited during start-up (exit code 1)" in result.reason
        assert REPORTS[name] in white["stderr_tail"], white["stderr_tail"]
    check_record(result)
    tail = white["stderr_tail"]
    assert "SECRET-KEY-THAT-MUST-NOT-LEAK" not in tail
    assert "def choose" not in tail  # another bot's file was not read
    for directory in ("/var/tmp", "/dev/shm", "/tmp", "/etc", "/", str(tmp_path)):
        assert not (Path(directory) / mark).exists()
    if name == "host_paths":
        secrets = host_paths(box, tmp_path)
        assert not revealed(secrets, tail), revealed(secrets, tail)
        assert not revealed(secrets, json.dumps(white["ready"]))


def test_a_bot_that_closes_its_output_loses_by_crash_at_once(full_sandbox):
    """Closing standard output (then sleeping) is the end of the bot's output: a crash at
    once, not a loss on time when the clock has run out (no other process holds the pipe)."""
    bot = BotSpec.load(HOSTILE / "close_stdout")
    result = play(full_sandbox(), bot, builtin("random"), time="5+0")
    assert result.outcome.termination is Failure.CRASH, result.reason
    assert result.fault == "white"
    assert result.reason.startswith("white closed its output at ply 1"), result.reason
    assert "close_stdout: closing standard output" in result.reason
    assert result.public_reason == "white closed its output at ply 1"
    assert result.transcript["players"]["white"]["clock_ms"] > 0
    check_record(result)


# -- host paths -----------------------------------------------------------------------------


def host_paths(sandbox: Sandbox, tmp_path: Path) -> list[str]:
    """The host folders a bot of ``sandbox`` must not learn of: the test's folders (where its
    bot folders are), the sandbox's state and staging folders, the repository."""
    return [
        str(tmp_path),
        str(tmp_path.parent),
        tmp_path.name,
        str(sandbox.state_dir),
        Path(sandbox.state_dir).name,
        str(sandbox.staging_dir),
        str(ROOT),
    ]


def encodings(text: str) -> set[re.Pattern[str]]:
    """``text`` as itself and in simple encodings a bot might use to smuggle it out: hex,
    base64 (each of the three alignments, without the characters the neighbours decide),
    URL quoting, reversed. As itself (quoted or reversed too) it is a whole name: ``/arena`` is
    not in ``/sbin/arena-vm-init``."""
    raw = text.encode()
    whole = {text, urllib.parse.quote(text)}
    found = {re.escape(t) + r"(?![\w.-])" for t in whole}
    found.add(r"(?<![\w.-])" + re.escape(text[::-1]))
    found |= {re.escape(raw.hex()), re.escape(raw.hex().upper())}
    for skip in range(3):
        encoded = base64.b64encode(b"\0" * skip + raw).decode()
        part = encoded[4 if skip else 0 : len(encoded) - 4]
        if len(part) >= 6:
            found.add(re.escape(part))
    return {re.compile(e) for e in found}


def revealed(secrets: list[str], seen: str) -> list[str]:
    """The secrets (or encodings of them) that occur in ``seen``."""
    return sorted({s for s in secrets for e in encodings(s) if e.search(seen)})


def test_encodings_of_a_path_are_found_where_a_bot_would_put_them():
    path = "/srv/arena/var/bot-cache/0123abcd/bot"
    for smuggled in (
        path,
        path.encode().hex(),
        base64.b64encode(b"x" + path.encode()).decode(),
        base64.b64encode(b"xy" + path.encode() + b"z").decode(),
        base64.b64encode(path.encode()).decode(),
        urllib.parse.quote(path),
        path[::-1],
    ):
        assert revealed([path], f"name: {smuggled}!") == [path], smuggled
    assert revealed([path], "/bot /usr/lib/python3") == []
    # A name that only starts like it is another name.
    assert revealed(["/arena"], "init=/sbin/arena-vm-init root=/arenas") == []
    assert revealed(["/arena"], "cwd /arena/bots") == ["/arena"]


def test_nothing_a_bot_can_read_names_a_host_folder(full_sandbox, tmp_path):
    """The hostile bot dumps the mount table, the command lines, environments, descriptors
    and memory maps of every process it sees (bubblewrap's own among them), its environment,
    working directory and every file name it can list. None of it names a folder of the host:
    not the bot's folder (one the slot uids can read, and a private one), nor the sandbox's
    state and staging folders, the test's folder, the repository (where the bot library bound
    at /opt/yinsh lives), in any simple encoding."""
    library = tmp_path / "library"
    library.mkdir()
    (library / "module.py").write_text("x = 1\n")
    for p in (tmp_path, library, library / "module.py"):
        p.chmod(0o755)
    box = full_sandbox(readonly_paths=((str(library), "/opt/library"),))
    folders = [adapted("host_paths", tmp_path).path]
    private = tmp_path / "private"
    shutil.copytree(HOSTILE / "host_paths", private)
    private.chmod(0o700)
    folders.append(private)
    secrets = [*host_paths(box, tmp_path), *(str(f.resolve()) for f in folders)]
    for folder in folders:
        bot = box.launch(folder, ["python3", "main.py"])
        try:
            output = bytearray()
            while chunk := os.read(bot.stdout, 1 << 16):
                output += chunk
        finally:
            bot.kill()
        dump = json.loads(output)
        assert dump["act"] == "host_paths"
        seen = dump["seen"]
        # It did see what there is to see (the mount table, bubblewrap as pid 1, /opt).
        assert " /bot " in seen["/proc/self/mountinfo"]
        assert "bwrap" in seen["/proc/1/cmdline"]
        assert "/opt/library/module.py" in seen["files"]
        text = output.decode()
        assert not revealed(secrets, text), revealed(secrets, text)


def test_the_orphan_of_a_hostile_bot_is_gone_after_the_match(full_sandbox, tmp_path):
    result = play(full_sandbox(), adapted("orphan", tmp_path), builtin("random"))
    grandchild = json.loads(result.transcript["players"]["white"]["stderr_tail"].splitlines()[0])
    assert grandchild["act"] == "orphan"
    # The game is over and the sandbox still open: not one process of any bot slot is left.
    assert not processes_of_uids(games_uids())


@pytest.fixture
def compiled_bot(tmp_path):
    source = TEST_BOTS / "protocol" / "c_first_legal"
    folder = tmp_path / "c_first_legal"
    shutil.copytree(source, folder)
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        skip_unless_required("no C compiler (gcc or cc) to build the compiled honest bot")
    subprocess.run([compiler, "-O2", "-o", str(folder / "bot"), str(folder / "main.c")], check=True)
    for p in (folder, *folder.iterdir()):
        p.chmod(0o755)
    return BotSpec.load(folder)


@pytest.mark.parametrize("name", ["random", "greedy", "search"])
def test_honest_python_bots_play_normally_in_the_sandbox(full_sandbox, name):
    result = play(full_sandbox(), builtin(name), builtin("random"), time="5+0.05")
    assert result.outcome.termination.by_rules, result.reason
    check_record(result)


def test_an_honest_compiled_bot_plays_normally_in_the_sandbox(full_sandbox, compiled_bot):
    box = full_sandbox()
    for white, black in ((compiled_bot, builtin("random")), (builtin("random"), compiled_bot)):
        result = play(box, white, black)
        assert result.outcome.termination.by_rules, result.reason
        assert result.fault is None
        check_record(result)
