"""The sandbox package's parts on their own: the lease a bot gives back, staging, the seccomp
filter's decisions (on both architectures, whatever this machine is), the split into modules.

The sandbox against real programs is in test_sandbox.py.
"""

from __future__ import annotations

import ast
import errno
import os
import shutil
import socket
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.referee.sandbox import (
    BotProcess,
    Lease,
    ProtectionLevel,
    Sandbox,
    SlotsExhausted,
    seccomp,
)
from arena.referee.sandbox.slots import SlotPool
from arena.referee.sandbox.staging import StagingArea

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "arena" / "referee" / "sandbox"
PRIVILEGED = {"spawn.py", "kill.py", "slots.py", "cgroups.py", "mounts.py"}


def private_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "main.py").write_text("print('hi')\n")
    folder.chmod(0o700)
    (folder / "main.py").chmod(0o600)
    return folder


def make_lease(tmp_path: Path) -> tuple[Lease, SlotPool, list[Lease]]:
    pool = SlotPool(tmp_path / "locks", 64900, 1)
    returned: list[Lease] = []
    staging = tmp_path / "staging"
    staging.mkdir()
    lease = Lease(
        uid=64900,
        slot=pool.acquire(),
        slots=pool,
        staging=StagingArea(staging),
        on_return=returned.append,
    )
    return lease, pool, returned


def test_a_lease_gives_its_slot_back_once_the_bot_is_gone(tmp_path: Path) -> None:
    lease, pool, returned = make_lease(tmp_path)
    with pytest.raises(SlotsExhausted):
        pool.acquire()
    lease.give_back(clean=True)
    assert lease.slot is None and returned == [lease]
    assert pool.acquire().uid == 64900
    pool.close()


def test_a_lease_keeps_its_slot_when_something_of_the_bot_may_be_left(tmp_path: Path) -> None:
    lease, pool, returned = make_lease(tmp_path)
    lease.scratch = tmp_path / "scratch"
    lease.scratch.mkdir()
    lease.give_back(clean=False)
    assert not (tmp_path / "scratch").exists(), "the scratch folder goes in any case"
    assert returned == [lease], "the sandbox forgets the bot in any case"
    with pytest.raises(SlotsExhausted):
        pool.acquire()
    pool.close()


def test_a_lease_stages_a_private_folder_and_gives_the_copy_back(tmp_path: Path) -> None:
    lease, pool, _ = make_lease(tmp_path)
    folder = private_folder(tmp_path)
    copy = lease.stage(folder)
    assert copy != folder and (copy / "main.py").read_text() == "print('hi')\n"
    assert lease.staged == [copy]
    lease.give_back(clean=True)
    assert lease.staged == []
    pool.close()


def test_a_lease_without_staging_binds_the_folder_itself(tmp_path: Path) -> None:
    folder = private_folder(tmp_path)
    assert Lease(uid=os.getuid()).stage(folder) == folder


def test_a_bot_holds_its_lease_and_no_reference_to_its_sandbox(
    make_sandbox: Callable[..., Sandbox],
) -> None:
    sandbox = make_sandbox(level=ProtectionLevel.FULL, slots=1)
    folder = ROOT / "tests" / "data" / "bots" / "honest" / "echo"
    bot = sandbox.launch(folder, ["python3", "main.py"])
    assert isinstance(bot, BotProcess)
    assert not any(isinstance(value, Sandbox) for value in vars(bot).values())
    lease = next(value for value in vars(bot).values() if isinstance(value, Lease))
    assert lease.slot is not None and lease.uid == bot.uid == lease.slot.uid
    assert lease.cgroup is not None and bot.cgroup_directories == lease.cgroup.directories
    assert sandbox.running() == [bot]
    bot.kill()
    assert lease.slot is None and sandbox.running() == []
    sandbox.launch(folder, ["python3", "main.py"]).kill()  # the one slot is free again


def module_docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


@pytest.mark.parametrize("path", sorted(PACKAGE.glob("*.py")), ids=lambda p: p.name)
def test_each_sandbox_module_says_whether_it_is_privileged(path: Path) -> None:
    text = module_docstring(path)
    if path.name in ("__init__.py", "__main__.py"):
        return
    if path.name in PRIVILEGED:
        assert "\nPrivileged:" in text, f"{path.name} must say what it does as root"
    else:
        assert "\nPure:" in text or "privileged" in text.lower(), (
            f"{path.name} must say that it is not privileged"
        )
        assert "\nPrivileged:" not in text


def test_only_the_privileged_modules_send_signals_by_pidfd() -> None:
    for path in PACKAGE.glob("*.py"):
        if "pidfd_send_signal" in path.read_text():
            assert path.name in {"kill.py", "cgroups.py"}, path.name


def test_the_privileged_modules_stay_small() -> None:
    for name in PRIVILEGED:
        lines = len((PACKAGE / name).read_text().splitlines())
        assert lines <= 400, f"{name} has {lines} lines"


def test_a_readable_folder_holding_a_fifo_or_a_socket_is_staged_without_them(
    tmp_path: Path,
) -> None:
    lease, pool, _ = make_lease(tmp_path)
    folder = Path(tempfile.mkdtemp(prefix="yinsh-library-"))  # in a folder anyone may enter
    try:
        folder.chmod(0o755)
        (folder / "module.py").write_text("x = 1\n")
        assert lease.stage(folder) == folder  # readable by all as it is: bound itself
        os.mkfifo(folder / "pipe")
        with socket.socket(socket.AF_UNIX) as server:
            server.bind(str(folder / "server.sock"))
            copy = lease.stage(folder)
        assert copy != folder
        assert sorted(p.name for p in copy.iterdir()) == ["module.py"]
    finally:
        shutil.rmtree(folder)
    lease.give_back(clean=True)
    pool.close()


def test_a_staging_area_that_stages_every_folder_copies_a_readable_one_once_per_content(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "library"
    folder.mkdir()
    (folder / "module.py").write_text("x = 1\n")
    area = StagingArea(tmp_path / "staging", always=True)
    area.directory.mkdir()
    copy = area.acquire(folder)
    assert copy is not None and copy.parent == area.directory
    assert (copy / "module.py").read_text() == "x = 1\n"
    assert str(folder) not in str(copy) and folder.name not in copy.name  # a random name
    assert area.acquire(folder) == copy  # the same content: the same copy
    # A change is told by names, modes, sizes and modification times (bot folders are
    # content-addressed and never rewritten in place): a rewrite of the same size within the
    # file system's timestamp tick would go unseen, so this one changes the size.
    (folder / "module.py").write_text("x = 20\n")
    second = area.acquire(folder)
    assert second is not None and second != copy
    assert (second / "module.py").read_text() == "x = 20\n"
    for staged in (copy, copy, second):
        area.release(staged)


# -- the seccomp filter, run by a small classic BPF interpreter --------------------------------

_ALLOW = 0x7FFF0000
_KILL = 0x80000000


def _errno(number: int) -> int:
    return 0x00050000 | number


def run_filter(program: bytes, audit_arch: int, nr: int, *args: int) -> int:
    """What the filter returns for one system call (struct seccomp_data, little-endian)."""
    values = [*args, 0, 0, 0, 0, 0, 0][:6]
    data = struct.pack("<iIQ6Q", nr, audit_arch, 0, *(v & (2**64 - 1) for v in values))
    instructions = list(struct.iter_unpack("=HBBI", program))
    accumulator, pc = 0, 0
    while True:
        code, jt, jf, k = instructions[pc]
        pc += 1
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            (accumulator,) = struct.unpack_from("<I", data, k)
        elif code == 0x06:  # BPF_RET | BPF_K
            return k
        else:
            taken = {
                0x15: accumulator == k,  # BPF_JEQ
                0x35: accumulator >= k,  # BPF_JGE
                0x45: bool(accumulator & k),  # BPF_JSET
            }[code]
            pc += jt if taken else jf


@pytest.mark.parametrize("arch", sorted(seccomp.ARCHITECTURES))
def test_the_seccomp_filter_fails_what_is_dangerous_and_kills_only_foreign_abis(
    arch: str,
) -> None:
    program = seccomp.build_filter()
    audit_arch, numbers = seccomp.ARCHITECTURES[arch]

    def decide(name: str, *args: int) -> int:
        return run_filter(program, audit_arch, numbers[name], *args)

    af_unix, af_inet, af_inet6, af_netlink = 1, 2, 10, 16
    for family, kind, protocol in [
        (af_unix, socket.SOCK_STREAM, 0),
        (af_inet, socket.SOCK_STREAM, 0),
        (af_inet, socket.SOCK_STREAM, 6),
        (af_inet6, socket.SOCK_DGRAM, 17),
        (af_inet, socket.SOCK_DGRAM, 1),  # ping sockets
        (af_inet6, socket.SOCK_DGRAM, 58),
        (af_netlink, socket.SOCK_RAW, 0),  # NETLINK_ROUTE
        (af_inet | 1 << 32, socket.SOCK_STREAM, 0),  # the kernel reads an int
    ]:
        assert decide("socket", family, kind, protocol) == _ALLOW, (family, protocol)
    eafnosupport, eprotonosupport = _errno(errno.EAFNOSUPPORT), _errno(errno.EPROTONOSUPPORT)
    for family in (0, 17, 38, 40, 44, 45, 255):  # AF_PACKET, AF_ALG, AF_VSOCK, AF_XDP, ...
        assert decide("socket", family, socket.SOCK_DGRAM, 0) == eafnosupport, family
    assert decide("socket", af_inet, socket.SOCK_STREAM, 132) == eprotonosupport  # SCTP
    assert decide("socket", af_inet6, socket.SOCK_STREAM, 262) == eprotonosupport  # MPTCP
    assert decide("socket", af_netlink, socket.SOCK_RAW, 12) == eprotonosupport  # netfilter
    assert decide("socketpair", af_unix, socket.SOCK_STREAM, 0) == _ALLOW
    assert decide("socketpair", af_inet, socket.SOCK_STREAM, 0) == eafnosupport
    escapes = {"ptrace", "mount", "unshare", "setns", "bpf", "io_uring_setup", "keyctl"}
    assert escapes <= set(seccomp.DENIED_SYSCALLS)
    for name in seccomp.DENIED_SYSCALLS:
        if name in numbers:
            assert decide(name, 0) == _errno(errno.EPERM), name
    clone_newuser, clone_thread_flags, sigchld = 0x10000000, 0x003D0F00, 17
    assert decide("clone", clone_newuser | sigchld) == _errno(errno.EPERM)
    assert decide("clone", clone_thread_flags) == _ALLOW
    assert decide("clone", sigchld) == _ALLOW
    assert decide("clone3", 0, 88) == _errno(errno.ENOSYS)
    for nr in range(0, 460):  # every call the filter does not name is allowed
        if nr not in numbers.values():
            assert run_filter(program, audit_arch, nr) == _ALLOW, nr
    # Another ABI: 32-bit x86 and ARM, and x32 numbers on x86_64.
    for foreign in (0x40000003, 0x40000028, 0xC000003F):
        assert run_filter(program, foreign, numbers["socket"], af_inet) == _KILL
    if arch == "x86_64":
        assert run_filter(program, audit_arch, 0x40000000 | 39) == _KILL
