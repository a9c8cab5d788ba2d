"""The sandbox against real hostile programs (tests/data/bots/hostile) and honest ones (honest/).

Each hostile bot does its act at start-up and reports what it achieved as JSON lines on its
standard output; the tests assert that the sandbox stopped it, that the sandbox reports the
right violation where it is the sandbox that stopped it, and that after kill() nothing of the
bot is left (the fixtures in conftest.py check the last part after every test).

Most tests need protection level FULL (root, bubblewrap, cgroups) and ask for it explicitly:
on a host without it they fail with the probe's explanation instead of passing vacuously.
"""

from __future__ import annotations

import json
import os
import platform
import select
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import tomllib
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from arena.referee.sandbox import (
    BotProcess,
    ProtectionLevel,
    Sandbox,
    SandboxSettings,
    SandboxUnavailable,
    SlotsExhausted,
    ViolationKind,
    cgrouplayout,
    cgroups,
    probe,
    processes_of_uids,
    reap,
    seccomp,
)
from tests.conftest import require_full_sandbox, require_root
from tests.referee.conftest import (
    SANDBOX_TEST_BASE_UID,
    SANDBOX_TEST_CGROUP,
    SANDBOX_TEST_SLOTS,
    HostListeners,
    sandbox_leftovers,
)

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "tests" / "data" / "bots"
FULL = ProtectionLevel.FULL
NAMESPACE = ProtectionLevel.NAMESPACE
NONE = ProtectionLevel.NONE

MakeSandbox = Callable[..., Sandbox]


# ------------------------------------------------------------------------------------------
# Helpers


def bot_folder(kind: str, name: str) -> Path:
    return BOTS / kind / name


def bot_command(folder: Path) -> list[str]:
    """The manifest's command, split like a shell would."""
    manifest = tomllib.loads((folder / "bot.toml").read_text())
    return shlex.split(manifest["command"])


def start(sandbox: Sandbox, kind: str, name: str, **kwargs: Any) -> BotProcess:
    folder = bot_folder(kind, name)
    return sandbox.launch(folder, bot_command(folder), **kwargs)


class Lines:
    """Reads a bot's JSON lines with a deadline (bounded polling, never a bare sleep)."""

    def __init__(self, bot: BotProcess) -> None:
        self.bot = bot
        self.buffer = b""
        self.lines: list[dict[str, Any]] = []
        self.closed = False

    def until(
        self, done: Callable[[list[dict[str, Any]]], bool], timeout: float = 15.0
    ) -> list[dict[str, Any]]:
        """Read until ``done(lines)`` holds, end of file, or the timeout; return all lines."""
        deadline = time.monotonic() + timeout
        while not done(self.lines) and not self.closed:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            readable, _, _ = select.select([self.bot.stdout], [], [], min(remaining, 0.2))
            if not readable:
                continue
            chunk = os.read(self.bot.stdout, 65536)
            if not chunk:
                self.closed = True
                break
            self.buffer += chunk
            *complete, self.buffer = self.buffer.split(b"\n")
            self.lines += [json.loads(line) for line in complete if line.strip()]
        return self.lines

    def first(self, key: str, timeout: float = 15.0) -> dict[str, Any]:
        """The first line that has ``key``."""
        lines = self.until(lambda ls: any(key in line for line in ls), timeout)
        for line in lines:
            if key in line:
                return line
        raise AssertionError(
            f"the bot never wrote a line with {key!r}; lines: {lines}; status "
            f"{self.bot.poll()}; stderr: {self.bot.stderr_tail()!r}"
        )

    def to_end(self, timeout: float = 15.0) -> list[dict[str, Any]]:
        return self.until(lambda _: False, timeout)


def send(bot: BotProcess, text: str) -> None:
    os.write(bot.stdin, text.encode() + b"\n")


def wait_until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    delay = 0.005
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.1)
    return True


def live_processes(uid: int) -> list[int]:
    return processes_of_uids(range(uid, uid + 1)).get(uid, [])


def assert_all_gone(bot: BotProcess) -> None:
    """What kill() promises: no process of the bot, no cgroup, descriptors closed."""
    assert live_processes(bot.uid) == [], f"processes of uid {bot.uid} survived kill()"
    for directory in bot.cgroup_directories:
        assert not directory.exists(), f"{directory} survived kill()"
    assert bot.stdin == -1 and bot.stdout == -1


def echo_round_trip(bot: BotProcess) -> dict[str, Any]:
    lines = Lines(bot)
    ready = lines.first("ready")
    send(bot, "hello sandbox")
    assert lines.first("echo") == {"echo": "hello sandbox"}
    return ready


def compile_c_bot(target: Path) -> Path:
    """Compile tests/data/bots/honest/c_echo into ``target`` (a folder no slot uid can reach)."""
    source = bot_folder("honest", "c_echo")
    target.mkdir()
    shutil.copy(source / "bot.toml", target / "bot.toml")
    shutil.copy(source / "data.txt", target / "data.txt")
    gcc = shutil.which("gcc") or shutil.which("cc")
    assert gcc, "a C compiler (gcc) is needed to build the compiled honest bot"
    subprocess.run([gcc, "-O2", "-o", str(target / "echo"), str(source / "main.c")], check=True)
    return target


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> str:
    """A server secret in the referee's own environment, which no bot may see."""
    value = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("YINSH_TEST_SECRET_KEY", value)
    monkeypatch.setenv("DATABASE_URL", f"postgres://arena:{value}@localhost/arena")
    return value


@pytest.fixture
def redis_up() -> None:
    """The real Redis the network test tries to reach must be running."""
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=2) as connection:
            connection.sendall(b"PING\r\n")
            assert connection.recv(16).startswith(b"+PONG")
    except OSError as exc:
        pytest.fail(
            f"Redis is not reachable on 127.0.0.1:6379 ({exc}); start it with: redis-server "
            '--daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no '
            "--dir /var/lib/redis --logfile /var/log/redis/ci.log"
        )


# ------------------------------------------------------------------------------------------
# The host


def test_probe_finds_full_protection_with_every_mechanism(
    sandbox_test_settings: Callable[..., SandboxSettings], sandbox_test_uids: range
) -> None:
    report = probe(sandbox_test_settings())
    require_full_sandbox(report)
    text = report.describe()
    assert "Untrusted bots are accepted" in text
    details = "\n".join(report.details)
    assert "bubblewrap" in details and "seccomp filter in force" in details
    assert "writable" in details and "cgroup" in details
    assert f"{sandbox_test_uids.start}-{sandbox_test_uids.stop - 1}" in details


def test_bots_cgroups_sit_where_the_referee_may_make_them(
    sandbox_test_settings: Callable[..., SandboxSettings],
) -> None:
    # v1: under each controller's mount. v2: under the group the referee was started in (a
    # container's or a systemd unit's), whose own processes moved into a leaf first, since v2
    # lets a non-root group hand controllers down only when no process sits in it.
    report = probe(sandbox_test_settings())
    require_full_sandbox(report)
    layout, _ = cgroups.detect()
    assert layout is not None
    if layout.version == 1:
        assert set(layout.hierarchies()) <= {m for m, kind in mounts_of() if kind == "cgroup"}
        return
    (home,) = layout.hierarchies()
    (mount,) = [m for m, kind in mounts_of() if kind == "cgroup2"]
    own = cgrouplayout.own_v2_group(Path("/proc/self/cgroup").read_text())
    assert home == cgrouplayout.home_group(mount, own)
    assert (home / SANDBOX_TEST_CGROUP).is_dir()
    if (home / "cgroup.freeze").exists():  # not the true root: the rule applies
        assert own.endswith(f"/{cgrouplayout.REFEREE_GROUP}")
        assert (home / "cgroup.procs").read_text().split() == []
        assert {"memory", "pids"} <= set((home / "cgroup.subtree_control").read_text().split())


def mounts_of() -> list[tuple[Path, str]]:
    """(mount point, filesystem type) of this process's mounts."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        found.append((Path(left.split()[4]), right.split()[0]))
    return found


def test_seccomp_program_is_well_formed() -> None:
    program = seccomp.build_filter()
    assert len(program) % seccomp.INSTRUCTION_SIZE == 0
    assert 10 < len(program) // seccomp.INSTRUCTION_SIZE < 4096


# ------------------------------------------------------------------------------------------
# Honest bots run normally


def test_honest_python_bot_reads_its_files_and_writes_scratch(
    make_sandbox: MakeSandbox, secret_env: str, sandbox_test_uids: range
) -> None:
    sandbox = make_sandbox(level=FULL)
    bot = start(sandbox, "honest", "echo")
    assert bot.level is FULL
    assert bot.uid in sandbox_test_uids
    ready = echo_round_trip(bot)
    assert ready["data"] == "secret-of-the-echo-bot"
    assert ready["scratch"] == "scratch works"
    assert ready["cwd"] == "/bot"
    assert ready["uid"] == bot.uid
    # The C library's user lookup first tries nscd over a unix socket; the bot survives it.
    assert ready["user"] == "bot"
    assert ready["environ"] == {
        "HOME": "/tmp",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "JAVA_TOOL_OPTIONS": "-XX:MaxRAM=256m",  # the bot's memory bound, for a JVM
        "PWD": "/bot",  # set by bubblewrap's --chdir
    }
    assert secret_env not in json.dumps(ready)
    bot.close_stdin()
    assert bot.wait(10) == 0
    assert bot.violation() is None
    assert bot.cpu_seconds() > 0
    bot.kill()
    assert_all_gone(bot)


def test_extra_environment_and_readonly_paths_reach_the_bot(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    library = tmp_path / "library"
    library.mkdir(mode=0o700)  # the slot uid cannot enter it: the sandbox stages a copy
    (library / "engine.txt").write_text("the engine")
    script = "import os; print(open('/opt/yinsh/library/engine.txt').read(), os.environ['MODE'])"
    sandbox = make_sandbox(
        level=FULL,
        env=(("MODE", "tournament"),),
        readonly_paths=((str(library), "/opt/yinsh/library"),),
    )
    bot = sandbox.launch(bot_folder("honest", "echo"), ["python3", "-c", script])
    assert bot.wait(10) == 0, bot.stderr_tail()
    assert os.read(bot.stdout, 100) == b"the engine tournament\n"
    bot.kill()


def test_compiled_c_bot_runs_from_a_folder_the_slot_uid_cannot_reach(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    folder = compile_c_bot(private / "c_echo")
    sandbox = make_sandbox(level=FULL)
    bot = sandbox.launch(folder, bot_command(folder))
    ready = echo_round_trip(bot)
    assert ready == {"ready": True, "data": "compiled-bot-data"}
    bot.close_stdin()
    assert bot.wait(10) == 0
    bot.kill()
    assert_all_gone(bot)


def test_private_bot_folder_is_staged_read_only_per_content(
    make_sandbox: MakeSandbox, tmp_path: Path
) -> None:
    folder = tmp_path / "private-bot"
    shutil.copytree(bot_folder("honest", "echo"), folder)
    os.chmod(folder, 0o700)
    os.chmod(folder / "data.txt", 0o600)
    sandbox = make_sandbox(level=FULL)
    bot = sandbox.launch(folder, bot_command(folder))
    assert Lines(bot).first("ready")["data"] == "secret-of-the-echo-bot"
    bot.kill()
    (folder / "data.txt").write_text("second version")
    bot = sandbox.launch(folder, bot_command(folder))
    assert Lines(bot).first("ready")["data"] == "second version"
    bot.kill()
    assert (folder / "data.txt").read_text() == "second version"
    assert stat.S_IMODE(os.stat(folder / "data.txt").st_mode) == 0o600  # original untouched


def test_a_new_sandbox_leaves_the_staged_copies_of_a_live_one_alone(
    make_sandbox: MakeSandbox,
) -> None:
    first = make_sandbox(level=FULL)
    bot = start(first, "honest", "echo")
    assert Lines(bot).first("ready")["data"] == "secret-of-the-echo-bot"
    make_sandbox(level=FULL)  # sweeps the state folder both share
    assert (first.staging_dir / "copies").is_dir(), "a live sandbox's staging folder was swept"
    bot.kill()
    bot = start(first, "honest", "echo")
    assert Lines(bot).first("ready")["data"] == "secret-of-the-echo-bot"
    bot.kill()


def test_the_staged_copies_are_mounted_where_only_the_bots_see_them(
    make_sandbox: MakeSandbox,
) -> None:
    """The tmpfs of the staged copies is in a mount namespace of the sandbox's own: the host's
    mount table never shows it, so nothing is left mounted whatever becomes of the referee."""
    sandbox = make_sandbox(level=FULL)
    assert sandbox.private_staging
    bot = start(sandbox, "honest", "echo")
    assert Lines(bot).first("ready")["data"] == "secret-of-the-echo-bot"
    assert str(sandbox.state_dir) not in Path("/proc/self/mountinfo").read_text()
    bot.kill()


def test_two_bots_run_concurrently_from_two_threads(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL)

    def play(_: int) -> tuple[int, dict[str, Any]]:
        bot = start(sandbox, "honest", "echo")
        try:
            ready = echo_round_trip(bot)
            return bot.uid, ready
        finally:
            bot.kill()

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(play, range(2)))
    uids = {uid for uid, _ in results}
    assert len(uids) == 2, "each concurrently running bot gets its own slot uid"
    assert all(ready["data"] == "secret-of-the-echo-bot" for _, ready in results)


def test_a_bot_outlives_the_thread_that_launched_it(make_sandbox: MakeSandbox) -> None:
    # bubblewrap's --die-with-parent fires when the forking *thread* ends: the sandbox forks
    # from its own long-lived thread, so a game thread may launch a bot and hand it over.
    sandbox = make_sandbox(level=FULL)
    launched: list[BotProcess] = []
    thread = threading.Thread(target=lambda: launched.append(start(sandbox, "honest", "echo")))
    thread.start()
    thread.join()
    bot = launched[0]
    echo_round_trip(bot)
    assert bot.poll() is None
    bot.kill()


def test_exit_status_and_stderr_are_reported(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL)
    folder = bot_folder("honest", "echo")
    bot = sandbox.launch(folder, ["/bin/sh", "-c", "echo 'bad move, sorry' >&2; exit 3"])
    assert bot.wait(10) == 3
    assert wait_until(lambda: "bad move, sorry" in bot.stderr_tail(), 5)
    assert bot.violation() is None
    bot.kill()
    crashed = sandbox.launch(folder, ["/bin/sh", "-c", "kill -SEGV $$"])
    assert crashed.wait(10) == -signal.SIGSEGV
    assert crashed.violation() is None
    crashed.kill()


def test_stderr_tail_keeps_only_the_end(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL, stderr_bytes=1000)
    script = (
        "import sys\n"
        "for i in range(20000): print(i, file=sys.stderr)\n"
        "print('end', file=sys.stderr)"
    )
    bot = sandbox.launch(bot_folder("honest", "echo"), ["python3", "-c", script])
    assert bot.wait(10) == 0
    assert wait_until(lambda: bot.stderr_tail().endswith("19999\nend\n"), 5)
    assert len(bot.stderr_tail()) <= 1000
    bot.kill()


# ------------------------------------------------------------------------------------------
# Hostile bots are stopped


def test_fork_bomb_is_stopped_by_the_process_limit(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL, max_processes=16)
    bot = start(sandbox, "hostile", "fork_bomb")
    report = Lines(bot).first("act")
    assert report["refused"] == "EAGAIN"
    assert report["children"] < 16
    violation = bot.violation()
    assert violation is not None and violation.kind is ViolationKind.PROCESSES
    assert "process limit of 16" in violation.message
    assert len(live_processes(bot.uid)) > report["children"]
    bot.kill()
    assert_all_gone(bot)


def test_memory_hog_is_killed_at_the_memory_limit(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL, memory_mb=128)
    bot = start(sandbox, "hostile", "memory_hog")
    lines = Lines(bot).to_end()
    assert bot.wait(10) == -signal.SIGKILL
    assert not any(line.get("done") for line in lines)
    assert max((line["mib"] for line in lines), default=0) < 128
    violation = bot.violation()
    assert violation is not None and violation.kind is ViolationKind.MEMORY
    assert violation.message == "memory limit of 128 MiB exceeded"
    bot.kill()
    assert_all_gone(bot)


def test_cpu_burned_through_a_chain_of_forks_is_stopped(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL, cpu_seconds=1.0)
    started = time.monotonic()
    bot = start(sandbox, "hostile", "cpu_fork_chain")
    lines = Lines(bot).to_end(timeout=20)
    assert bot.wait(10) is not None
    elapsed = time.monotonic() - started
    links = [line for line in lines if line.get("act") == "cpu"]
    assert len(links) >= 3, "the chain spread its work over several processes"
    assert all(line["own_cpu"] < 0.5 for line in links), "each under any per-process limit"
    violation = bot.violation()
    assert violation is not None and violation.kind is ViolationKind.CPU
    assert violation.message == "CPU time limit of 1 s exceeded"
    assert 1.0 <= bot.cpu_seconds() < 2.0
    assert elapsed < 10
    bot.kill()
    assert_all_gone(bot)


def test_other_bots_files_and_server_secrets_are_invisible(
    make_sandbox: MakeSandbox, secret_env: str, sandbox_state_dir: str
) -> None:
    secrets_dir = Path(tempfile.mkdtemp(prefix="yinsh-secrets-"))
    try:
        os.chmod(secrets_dir, 0o755)
        root_only = secrets_dir / "secret_key"
        root_only.write_text(secret_env)
        os.chmod(root_only, 0o600)
        database = secrets_dir / "db.sqlite3"  # world-readable on the host
        database.write_text(f"users: {secret_env}")
        os.chmod(database, 0o644)
        other_bot = bot_folder("honest", "echo")
        targets = [
            str(other_bot / "data.txt"),
            str(root_only),
            str(database),
            sandbox_state_dir,
            "/etc/shadow",
            "/root/.bashrc",
            "/var/lib/postgresql",
            "/run/redis/redis-server.sock",
        ]
        sandbox = make_sandbox(level=FULL, env=(("TARGETS", json.dumps(targets)),))
        neighbour = start(sandbox, "honest", "echo")
        Lines(neighbour).first("ready")
        snoop = start(sandbox, "hostile", "snoop")
        report = Lines(snoop).first("act")
    finally:
        shutil.rmtree(secrets_dir, ignore_errors=True)
    files = report["files"]
    for target in targets:
        assert files[target] == "ENOENT", f"{target} is visible inside the sandbox: {files[target]}"
    assert secret_env not in json.dumps(report)
    assert sorted(report["environ"]) == [
        "HOME",
        "JAVA_TOOL_OPTIONS",
        "LANG",
        "PATH",
        "PWD",
        "TARGETS",
    ]
    # Its own pid namespace: bwrap's init, the bot; not the neighbour, not the host.
    assert len(report["processes"]) <= 3 and neighbour.pid not in report["processes"]
    visible_root = ["bin", "bot", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr"]
    assert report["root"] == visible_root
    snoop.kill()
    neighbour.kill()
    assert_all_gone(snoop)
    assert_all_gone(neighbour)


def reached_on_the_host(labels: list[str]) -> set[str]:
    """Which of network_client's targets ("tcp HOST PORT", "unix PATH", "abstract NAME")
    answer here."""
    answering = set()
    for label in labels:
        kind, *where = label.split(" ")
        try:
            if kind == "tcp":
                socket.create_connection((where[0], int(where[1])), timeout=2).close()
            elif kind in ("unix", "abstract"):
                with socket.socket(socket.AF_UNIX) as connection:
                    connection.connect(where[0] if kind == "unix" else "\0" + where[0])
            else:
                continue
        except OSError:
            continue
        answering.add(label)
    return answering


def test_no_socket_reaches_the_host_or_the_outside(
    make_sandbox: MakeSandbox, redis_up: None, host_listeners: HostListeners
) -> None:
    # Unsandboxed, the same bot reaches the host's servers: its attempts are real ones.
    plain = make_sandbox(level=NONE, env=(*host_listeners.env(), ("NETWORK_CONTROL", "1")))
    control = start(plain, "hostile", "network_client", trusted=True)
    report = Lines(control).first("act")
    control.kill()
    ours = [f"tcp {host} {port}" for host, port in host_listeners.tcp]
    ours += [f"unix {host_listeners.unix_path}", f"abstract {host_listeners.abstract}"]
    services = reached_on_the_host(list(report["results"]))
    assert "tcp 127.0.0.1 6379" in services  # Redis
    assert set(report["reached"]) == services | set(ours), report["results"]

    # In the sandbox every attempt fails, with the error a program expects, and nothing kills
    # the bot. The folder holding the host's socket file is bound in: as a copy without it.
    sandbox = make_sandbox(
        level=FULL,
        env=host_listeners.env(unix_paths=("/run/service/server.sock",)),
        readonly_paths=((str(host_listeners.unix_path.parent), "/run/service"),),
    )
    bot = start(sandbox, "hostile", "network_client")
    report = Lines(bot).first("act", timeout=30)
    assert bot.wait(10) == 0 and bot.violation() is None
    assert report["reached"] == []
    expected = {
        "tcp 127.0.0.1": "ECONNREFUSED",  # its own loopback: nobody listens there
        "tcp ::1": "ECONNREFUSED",
        "tcp": "ENETUNREACH",  # any other address, the host's own included
        "udp": "ENETUNREACH",
        "unix": "ENOENT",  # no host socket file is visible
        "abstract": "ECONNREFUSED",  # abstract names belong to the network namespace
        "vsock": "EAFNOSUPPORT",
        "socketpair": "EAFNOSUPPORT",
        "netlink": "EPROTONOSUPPORT",  # any protocol but NETLINK_ROUTE
        "inet": "EPROTONOSUPPORT",  # SCTP, DCCP, UDP-Lite, L2TP, MPTCP
    }
    for label, result in report["results"].items():
        prefix = next(p for p in expected if label.startswith(p + " "))
        assert result == expected[prefix], f"{label}: {result}"
    assert f"tcp 127.0.0.1 {host_listeners.tcp[0][1]}" in report["results"]
    assert "unix /run/service/server.sock" in report["results"]
    families = report["families"]
    assert len(families) == 42 and set(families.values()) == {"EAFNOSUPPORT"}, families
    # Inside its own namespace, sockets work.
    assert report["inside"] == {
        "loopback tcp": "ping",
        "unix in /tmp": "ping",
        "localhost": "127.0.0.1",
    }
    bot.kill()
    assert_all_gone(bot)


def test_special_files_of_a_bound_folder_are_left_out(
    make_sandbox: MakeSandbox, host_listeners: HostListeners
) -> None:
    folder = host_listeners.unix_path.parent
    (folder / "notes.txt").write_text("visible")
    os.mkfifo(folder / "pipe", 0o666)
    script = "import os, json; print(json.dumps(sorted(os.listdir('/run/service'))))"
    sandbox = make_sandbox(level=FULL, readonly_paths=((str(folder), "/run/service"),))
    bot = sandbox.launch(bot_folder("honest", "echo"), ["python3", "-c", script])
    assert bot.wait(10) == 0, bot.stderr_tail()
    assert json.loads(os.read(bot.stdout, 1000)) == ["notes.txt"]
    bot.kill()
    # A socket itself cannot be bound in.
    sandbox = make_sandbox(
        level=FULL, readonly_paths=((str(host_listeners.unix_path), "/run/service.sock"),)
    )
    with pytest.raises(SandboxUnavailable, match="not a regular file or a folder"):
        sandbox.launch(bot_folder("honest", "echo"), ["true"])


def test_a_system_call_of_a_foreign_abi_kills_the_bot(make_sandbox: MakeSandbox) -> None:
    if platform.machine() != "x86_64":
        pytest.skip("only an x86_64 kernel has a foreign system call ABI to try")
    for abi in ("i386", "x32"):
        sandbox = make_sandbox(level=FULL, env=(("ABI", abi),))
        bot = start(sandbox, "hostile", "foreign_abi")
        lines = Lines(bot).to_end()
        assert lines == [{"act": "foreign_abi", "abi": abi, "machine": "x86_64"}]
        assert bot.wait(10) == -signal.SIGSYS
        violation = bot.violation()
        assert violation is not None and violation.kind is ViolationKind.FORBIDDEN_SYSCALL
        assert "a system call of another ABI" in violation.message
        bot.kill()
        assert_all_gone(bot)


def test_escape_system_calls_are_denied(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL)
    bot = start(sandbox, "hostile", "escape_syscalls")
    report = Lines(bot).first("act")
    for call, result in report["results"].items():
        assert result == "EPERM", f"{call}: {result}"
    assert report["thread"] == ["thread ran"] and report["child"] == "child ran"
    assert bot.wait(10) == 0
    bot.kill()


def test_writes_outside_scratch_fail(make_sandbox: MakeSandbox) -> None:
    mark = f"pwned-{uuid.uuid4().hex}"
    sandbox = make_sandbox(level=FULL, env=(("MARK", mark),))
    folder = bot_folder("hostile", "write_outside")
    bot = start(sandbox, "hostile", "write_outside")
    report = Lines(bot).first("act")
    results = report["results"]
    assert results["/tmp"] == "written"
    for directory in ("/bot", "/usr", "/var/tmp", "/dev", "/etc", "/"):
        assert results[directory] == "EROFS", f"{directory}: {results[directory]}"
    assert results["/proc"] in ("EACCES", "ENOENT", "EROFS")
    # /dev/shm is the bot's own scratch (POSIX shared memory keeps working), never the host's.
    assert results["/dev/shm"] == "written" and report["shm_is"] == "/tmp"
    for host_dir in (folder, Path("/usr"), Path("/var/tmp"), Path("/dev/shm"), Path("/tmp")):
        assert not (host_dir / mark).exists(), f"the bot wrote {host_dir / mark} on the host"
    bot.kill()
    assert_all_gone(bot)


def test_huge_file_in_scratch_is_stopped_at_the_file_size_limit(
    make_sandbox: MakeSandbox, sandbox_state_dir: str
) -> None:
    free_before = shutil.disk_usage("/").free
    sandbox = make_sandbox(level=FULL, scratch_mb=32)
    bot = start(sandbox, "hostile", "big_file")
    lines = Lines(bot).to_end()
    assert bot.wait(10) == -signal.SIGXFSZ
    assert not any(line.get("done") for line in lines)
    assert max(line["mib"] for line in lines) <= 32
    violation = bot.violation()
    assert violation is not None and violation.kind is ViolationKind.FILE_SIZE
    assert violation.message == "file size limit of 32 MiB exceeded"
    bot.kill()
    assert_all_gone(bot)
    # The scratch is a tmpfs in the bot's mount namespace: nothing reached the disk.
    assert shutil.disk_usage("/").free > free_before - (1 << 30)
    written = sum(f.stat().st_size for f in Path(sandbox_state_dir).rglob("*") if f.is_file())
    assert written < 1 << 20


def test_double_forked_setsid_orphan_is_gone_after_kill(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL)
    bot = start(sandbox, "hostile", "orphan")
    Lines(bot).first("grandchild")
    # bwrap, bwrap's init in the pid namespace, the bot, the detached grandchild.
    assert len(live_processes(bot.uid)) >= 4
    bot.kill()
    assert_all_gone(bot)
    bot.kill()  # idempotent


# ------------------------------------------------------------------------------------------
# Freezing, slots, the referee's death


def test_pause_stops_cpu_use_and_resume_continues(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL)
    bot = start(sandbox, "honest", "spinner")
    Lines(bot).first("ready")
    assert wait_until(lambda: bot.cpu_seconds() > 0.1, 5)
    bot.pause()
    paused_at = bot.cpu_seconds()
    time.sleep(0.3)  # a measuring window, not synchronisation
    assert bot.cpu_seconds() - paused_at < 0.005
    bot.resume()
    assert wait_until(lambda: bot.cpu_seconds() > paused_at + 0.05, 5)
    bot.pause()  # a paused bot is still killed completely
    bot.kill()
    assert_all_gone(bot)


def test_slots_are_limited_and_freed_by_kill(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL, slots=2)
    first = start(sandbox, "honest", "echo")
    second = start(sandbox, "honest", "echo")
    with pytest.raises(SlotsExhausted):
        start(sandbox, "honest", "echo")
    first.kill()
    third = start(sandbox, "honest", "echo")
    assert Lines(third).first("ready")["data"] == "secret-of-the-echo-bot"
    second.kill()
    third.kill()


def test_close_kills_every_running_bot(make_sandbox: MakeSandbox) -> None:
    sandbox = make_sandbox(level=FULL)
    bots = [start(sandbox, "honest", "spinner"), start(sandbox, "hostile", "orphan")]
    Lines(bots[1]).first("grandchild")
    sandbox.close()
    for bot in bots:
        assert_all_gone(bot)
    with pytest.raises(RuntimeError):
        start(sandbox, "honest", "echo")


_REFEREE_SCRIPT = """
import json, sys, time, types
root, state_dir, bot_dir, pause = sys.argv[1:5]
# Import the referee package alone (the arena package would load Django and Celery).
sys.path.insert(0, root)  # the referee is plain Python: no Django, no Celery
from arena.referee.sandbox import Sandbox, SandboxSettings
settings = SandboxSettings(state_dir=state_dir, first_uid={first_uid}, slots={slots},
                           cgroup_name={cgroup!r})
sandbox = Sandbox(settings)
bot = sandbox.launch(bot_dir, ["python3", "main.py"])
line = b""
while not line.endswith(b"\\n"):
    line += __import__("os").read(bot.stdout, 65536)
if pause == "yes":
    bot.pause()
info = {{"uid": bot.uid, "cgroups": [str(d) for d in bot.cgroup_directories]}}
print(json.dumps(info), flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("sweeper", ["new sandbox", "reap"])
@pytest.mark.parametrize("paused", [False, True], ids=["running", "paused"])
def test_killing_the_referee_kills_its_bots_and_a_new_sandbox_sweeps(
    make_sandbox: MakeSandbox,
    sandbox_test_settings: Callable[..., SandboxSettings],
    sandbox_state_dir: str,
    sandbox_test_uids: range,
    paused: bool,
    sweeper: str,
) -> None:
    """What a referee killed with SIGKILL leaves is swept by the next sandbox on the host, or
    by ``reap()`` (a worker's start, the arena's sweeper), which spares the bots of the live."""
    require_full_sandbox(probe(SandboxSettings(state_dir=sandbox_state_dir)))
    alive = start(make_sandbox(level=FULL), "honest", "spinner")
    script = _REFEREE_SCRIPT.format(
        first_uid=sandbox_test_uids.start, slots=SANDBOX_TEST_SLOTS, cgroup=SANDBOX_TEST_CGROUP
    )
    referee = subprocess.Popen(
        [
            sys.executable,
            "-c",
            script,
            str(ROOT),
            sandbox_state_dir,
            # It computes and never reads its input: only --die-with-parent can stop it.
            str(bot_folder("honest", "spinner")),
            "yes" if paused else "no",
        ],
        stdout=subprocess.PIPE,
    )
    try:
        assert referee.stdout is not None
        info = json.loads(referee.stdout.readline())
        uid = info["uid"]
        assert live_processes(uid), "the referee's bot is running"
    finally:
        referee.send_signal(signal.SIGKILL)
        referee.wait()
    if not paused:
        # bwrap --die-with-parent: the bot dies with the referee, by itself.
        assert wait_until(lambda: not live_processes(uid), 5), "the bot outlived its referee"
    # A paused bot is frozen: on cgroup v1 it cannot even die until thawed. Either way the
    # next sandbox on this host (or a reap) sweeps what is left: processes and stale cgroups.
    assert all(Path(d).exists() for d in info["cgroups"])
    if sweeper == "reap":
        reap(sandbox_test_settings())
    else:
        make_sandbox(level=FULL)
    assert not live_processes(uid)
    assert not any(Path(d).exists() for d in info["cgroups"])
    assert live_processes(alive.uid), "a live sandbox's bot was killed"
    alive.kill()
    assert sandbox_leftovers(sandbox_test_uids) == ({}, [])


# ------------------------------------------------------------------------------------------
# Lower levels


def test_untrusted_bots_are_refused_below_full_without_the_switch(
    make_sandbox: MakeSandbox,
) -> None:
    for level in (NAMESPACE, NONE):
        sandbox = make_sandbox(level=level)
        with pytest.raises(SandboxUnavailable, match="refusing to run an untrusted bot"):
            start(sandbox, "honest", "echo")
        bot = start(sandbox, "honest", "echo", trusted=True)
        assert Lines(bot).first("ready")["data"] == "secret-of-the-echo-bot"
        bot.kill()
        switched = make_sandbox(level=level, allow_unsandboxed=True)
        bot = start(switched, "honest", "echo")
        assert Lines(bot).first("ready")["data"] == "secret-of-the-echo-bot"
        bot.kill()


def test_namespace_level_isolates_without_cgroups(
    make_sandbox: MakeSandbox, secret_env: str
) -> None:
    require_root("it runs a lower level as root, with slot uids, to see that nothing is left")
    sandbox = make_sandbox(level=NAMESPACE, max_processes=16)
    bot = start(sandbox, "honest", "echo", trusted=True)
    assert bot.level is NAMESPACE and bot.cgroup_directories == ()
    ready = echo_round_trip(bot)
    assert ready["uid"] == bot.uid and ready["cwd"] == "/bot"
    assert secret_env not in json.dumps(ready)
    bot.kill()
    assert_all_gone(bot)

    network = start(sandbox, "hostile", "network_client", trusted=True)
    assert Lines(network).first("act", timeout=30)["reached"] == []
    # It exits by itself once it has reported (a busy machine once took over 10 s: say what
    # was still there if it does not).
    status = network.wait(60)
    assert status == 0, (status, network.stderr_tail()[-2000:], live_processes(network.uid))
    network.kill()

    # Without a pids cgroup, RLIMIT_NPROC on the slot's own uid still bounds a fork bomb,
    # but the sandbox cannot tell that it was hit.
    bomb = start(sandbox, "hostile", "fork_bomb", trusted=True)
    report = Lines(bomb).first("act")
    assert report["refused"] == "EAGAIN" and report["children"] < 16
    bomb.kill()
    assert_all_gone(bomb)

    spinner = start(sandbox, "honest", "spinner", trusted=True)
    Lines(spinner).first("ready")
    assert wait_until(lambda: spinner.cpu_seconds() > 0.1, 5), "CPU time is estimated from /proc"
    spinner.pause()  # no freezer at this level: a no-op
    spinner.kill()
    assert_all_gone(spinner)


def test_namespace_level_watchdog_stops_a_fork_chain(make_sandbox: MakeSandbox) -> None:
    require_root("it runs a lower level as root, with slot uids, to see that nothing is left")
    sandbox = make_sandbox(level=NAMESPACE, cpu_seconds=1.0)
    bot = start(sandbox, "hostile", "cpu_fork_chain", trusted=True)
    Lines(bot).to_end(timeout=20)
    assert bot.wait(10) is not None
    violation = bot.violation()
    assert violation is not None and violation.kind is ViolationKind.CPU
    bot.kill()
    assert_all_gone(bot)


def test_none_level_is_a_plain_process_with_a_private_scratch(
    make_sandbox: MakeSandbox, secret_env: str
) -> None:
    sandbox = make_sandbox(level=NONE)
    bot = start(sandbox, "honest", "echo", trusted=True)
    assert bot.level is NONE
    ready = echo_round_trip(bot)
    scratch = ready["environ"]["HOME"]
    assert ready["environ"]["TMPDIR"] == scratch and Path(scratch).is_dir()
    assert ready["cwd"] == str(bot_folder("honest", "echo"))
    assert secret_env not in json.dumps(ready)
    bot.kill()
    assert not Path(scratch).exists()
    assert bot.poll() is not None


def _ordinary_user_has_user_namespaces() -> bool:
    """Whether an ordinary uid can run bubblewrap here (probed, not guessed)."""
    bwrap = shutil.which("bwrap")
    setpriv = shutil.which("setpriv")
    if bwrap is None or setpriv is None or os.geteuid() != 0:
        return False
    command = [setpriv, "--reuid=64590", "--regid=64590", "--clear-groups", "--", bwrap]
    command += ["--unshare-user", "--unshare-pid", "--ro-bind", "/", "/", "/bin/true"]
    done = subprocess.run(
        command,
        capture_output=True,
        timeout=10,
        check=False,
    )
    return done.returncode == 0


_NON_ROOT_SCRIPT = """
import json, os, sys
root, state_dir, bot_dir = sys.argv[1:4]
sys.path.insert(0, root)  # the referee is plain Python: no Django, no Celery
from arena.referee.sandbox import Sandbox, SandboxSettings, SandboxUnavailable, probe
settings = SandboxSettings(state_dir=state_dir)
result = {"level": probe(settings).level.value, "describe": probe(settings).describe()}
sandbox = Sandbox(settings)
try:
    sandbox.launch(bot_dir, ["python3", "main.py"])
    result["refused"] = False
except SandboxUnavailable:
    result["refused"] = True
sandbox.close()
sandbox = Sandbox(settings, allow_unsandboxed=True)
bot = sandbox.launch(bot_dir, ["python3", "main.py"])
data = b""
while not data.endswith(b"\\n"):
    chunk = os.read(bot.stdout, 65536)
    if not chunk:
        break
    data += chunk
result["ready"] = json.loads(data) if data else None
result["stderr"] = bot.stderr_tail()
bot.kill()
result["uid"] = bot.uid
sandbox.close()
print(json.dumps(result))
"""


@pytest.mark.skipif(
    not _ordinary_user_has_user_namespaces(),
    reason="this host does not let an ordinary user run bubblewrap (no unprivileged user "
    "namespaces, or the test does not run as root and cannot switch to an ordinary user)",
)
def test_non_root_referee_runs_at_namespace_level(sandbox_test_uids: range) -> None:
    # An ordinary uid outside every slot range, one per test session.
    user = 64590 + (sandbox_test_uids.start - SANDBOX_TEST_BASE_UID) // SANDBOX_TEST_SLOTS
    state_dir = Path(tempfile.mkdtemp(prefix="yinsh-nonroot-"))
    try:
        os.chown(state_dir, user, user)
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"]
        command += ["/usr/bin/python3", "-c", _NON_ROOT_SCRIPT, str(ROOT), str(state_dir)]
        command += [str(bot_folder("honest", "echo"))]
        done = subprocess.run(
            command,
            capture_output=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
            cwd="/",
            check=False,
        )
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)
    assert done.returncode == 0, done.stderr.decode()
    result = json.loads(done.stdout)
    assert result["level"] == "namespace", result["describe"]
    assert "no cgroups" in result["describe"]
    assert result["refused"] is True
    ready = result["ready"]
    assert ready is not None, result["stderr"]
    assert ready["data"] == "secret-of-the-echo-bot" and ready["cwd"] == "/bot"
    assert ready["uid"] == user == result["uid"]
    assert not processes_of_uids(range(user, user + 1))


def test_settings_reject_unsafe_values() -> None:
    with pytest.raises(ValueError):
        SandboxSettings(readonly_paths=(("/srv/engine", "/bot/engine"),))
    with pytest.raises(ValueError):
        SandboxSettings(readonly_paths=(("relative", "/opt/x"),))
    with pytest.raises(ValueError):
        SandboxSettings(env=(("BAD=NAME", "x"),))
    with pytest.raises(ValueError):
        SandboxSettings(max_processes=2)
