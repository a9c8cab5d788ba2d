"""Hostile bots (tests/data/bots/hostile/) in real sandboxed matches against the random bot.

The hostile bots do their act at start-up and report what happened as JSON lines; they do not
speak the protocol. Each is played through a small adapter (copied beside it) that reads
``hello``, runs the hostile ``main.py`` in its own process with its reports sent to standard
error, then exits with status 1. So every hostile bot loses: by ``sandbox-violation`` (with the
sandbox's message) where the sandbox stopped it, else by ``crash`` with the report of the
failed attempt in the stderr tail. The fixtures check that nothing of any bot is left.

Honest bots play normally in the same sandbox: the Python bots of bots/ and a compiled one.
"""

import json
import os
import platform
import shutil
import subprocess
from pathlib import Path

import pytest

import engine
from arena.referee.bots import BotSpec
from arena.referee.outcomes import Failure
from arena.referee.sandbox import processes_of_uids
from tests.conftest import games_uids, skip_unless_required

from .conftest import HostListeners
from .games import TEST_BOTS, builtin, check_record, play

HOSTILE = TEST_BOTS / "hostile"

ADAPTER = '''\
"""Protocol adapter: read hello, run the hostile main.py here, its output to stderr, then fail."""
import io
import os
import runpy
import sys
import traceback

sys.stdin.readline()
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
    "memory_hog": "memory",
    "network_client": None,
    "orphan": None,
    "snoop": None,
    "write_outside": None,
}
# What the stderr tail must show of a failed attempt (the bot's own report).
REPORTS = {
    "escape_syscalls": '"unshare(CLONE_NEWUSER)": "EPERM"',
    "orphan": '"act": "orphan"',
    "network_client": '"reached": []',
    "snoop": '"act": "snoop"',
    "write_outside": '"/usr": "EROFS"',
}


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
    assert sorted(p.name for p in HOSTILE.iterdir() if p.is_dir()) == sorted(EXPECTED)
    if name == "foreign_abi" and platform.machine() != "x86_64":
        pytest.skip("only an x86_64 kernel has a foreign system call ABI to try")
    mark = f"hostile-mark-{os.getpid()}-{name}"
    env = {
        "MARK": mark,
        "TARGETS": json.dumps([str(secret), str(builtin("greedy").path / "main.py")]),
    }
    # The folder of the host's socket file is bound in (the sandbox binds a copy without it).
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
