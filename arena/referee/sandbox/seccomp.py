"""The seccomp filter loaded into every sandboxed bot, as a classic BPF program.

The program is built here in pure Python (no libseccomp bindings) and handed to bubblewrap
with ``--seccomp FD``. It

* kills the whole bot process (``SECCOMP_RET_KILL_PROCESS``, the bot dies of ``SIGSYS``) on
  ``socket()`` of any network address family: bots talk to the referee over their standard
  streams only;
* fails ``socket(AF_UNIX, ...)`` with ``EACCES``, or kills the bot for it too when asked
  (``kill_unix_sockets``). A network namespace alone leaves pathname unix sockets (a Redis or
  PostgreSQL socket file) reachable, so they must be refused here; but the C library's user
  lookups (``getpwuid``, which every JVM calls at start-up) first try the nscd daemon through
  a unix socket and fall back to files when ``socket()`` fails, so killing on it would kill
  honest bots. ``socketpair()`` stays allowed;
* kills the process on a system call of an unexpected architecture, and on x32 system calls;
* fails the usual escape and administration calls (:data:`DENIED_SYSCALLS`) with ``EPERM``,
  and ``clone()`` with any namespace flag;
* fails ``clone3()`` with ``ENOSYS`` (its flags live in memory a filter cannot read), which
  makes the C library fall back to ``clone()``, where the flags are checked.

Both x86_64 and aarch64 are covered by the same program.

Pure: it builds bytes; bubblewrap loads them into the bot.

>>> program = build_filter()
>>> len(program) % INSTRUCTION_SIZE
0
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Iterable, Mapping

__all__ = [
    "DENIED_SYSCALLS",
    "INSTRUCTION_SIZE",
    "build_filter",
    "filter_pipe",
]

# Classic BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
_BPF_LD_W_ABS = 0x20
_BPF_JEQ_K = 0x15
_BPF_JGE_K = 0x35
_BPF_JSET_K = 0x45
_BPF_RET_K = 0x06

_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000

# Offsets in struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6].
_OFFSET_NR = 0
_OFFSET_ARCH = 4
_OFFSET_ARG0_LOW = 16  # both supported architectures are little-endian

_AUDIT_ARCH_X86_64 = 0xC000003E
_AUDIT_ARCH_AARCH64 = 0xC00000B7
_X32_SYSCALL_BIT = 0x40000000

# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
# | CLONE_NEWNET. (CLONE_NEWTIME shares its bit with the exit signal in clone().)
_CLONE_NAMESPACE_FLAGS = 0x7E020000

INSTRUCTION_SIZE = 8
"""Bytes per instruction (struct sock_filter)."""

_AF_UNIX = 1

DENIED_SYSCALLS: tuple[str, ...] = (
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "mount_setattr",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "unshare",
    "setns",
    "sethostname",
    "setdomainname",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "keyctl",
    "add_key",
    "request_key",
    "open_by_handle_at",
    "name_to_handle_at",
    "fanotify_init",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "swapon",
    "swapoff",
    "reboot",
    "clock_settime",
    "clock_adjtime",
    "settimeofday",
    "adjtimex",
    "acct",
    "quotactl",
    "quotactl_fd",
    "syslog",
    "lookup_dcookie",
    "vhangup",
    "nfsservctl",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "iopl",
    "ioperm",
    "modify_ldt",
)
"""System calls that fail with EPERM (escape, tracing and host administration)."""

# System call numbers, from the kernel's uapi headers (asm/unistd_64.h for x86_64,
# asm-generic/unistd.h for aarch64). Calls an architecture does not have are absent.
_X86_64: Mapping[str, int] = {
    "socket": 41,
    "socketpair": 53,
    "clone": 56,
    "clone3": 435,
    "ptrace": 101,
    "mount": 165,
    "umount2": 166,
    "pivot_root": 155,
    "chroot": 161,
    "unshare": 272,
    "setns": 308,
    "bpf": 321,
    "keyctl": 250,
    "add_key": 248,
    "request_key": 249,
    "perf_event_open": 298,
    "kexec_load": 246,
    "kexec_file_load": 320,
    "init_module": 175,
    "finit_module": 313,
    "delete_module": 176,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "userfaultfd": 323,
    "process_vm_readv": 310,
    "process_vm_writev": 311,
    "open_by_handle_at": 304,
    "name_to_handle_at": 303,
    "swapon": 167,
    "swapoff": 168,
    "reboot": 169,
    "clock_settime": 227,
    "clock_adjtime": 305,
    "settimeofday": 164,
    "adjtimex": 159,
    "acct": 163,
    "quotactl": 179,
    "quotactl_fd": 443,
    "syslog": 103,
    "lookup_dcookie": 212,
    "mount_setattr": 442,
    "move_mount": 429,
    "open_tree": 428,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "iopl": 172,
    "ioperm": 173,
    "vhangup": 153,
    "nfsservctl": 180,
    "uselib": 134,
    "ustat": 136,
    "sysfs": 139,
    "_sysctl": 156,
    "kcmp": 312,
    "fanotify_init": 300,
    "pidfd_getfd": 438,
    "modify_ldt": 154,
    "create_module": 174,
    "get_kernel_syms": 177,
    "query_module": 178,
    "sethostname": 170,
    "setdomainname": 171,
}

_AARCH64: Mapping[str, int] = {
    "socket": 198,
    "socketpair": 199,
    "clone": 220,
    "clone3": 435,
    "ptrace": 117,
    "mount": 40,
    "umount2": 39,
    "pivot_root": 41,
    "chroot": 51,
    "unshare": 97,
    "setns": 268,
    "bpf": 280,
    "keyctl": 219,
    "add_key": 217,
    "request_key": 218,
    "perf_event_open": 241,
    "kexec_load": 104,
    "kexec_file_load": 294,
    "init_module": 105,
    "finit_module": 273,
    "delete_module": 106,
    "io_uring_setup": 425,
    "io_uring_enter": 426,
    "io_uring_register": 427,
    "userfaultfd": 282,
    "process_vm_readv": 270,
    "process_vm_writev": 271,
    "open_by_handle_at": 265,
    "name_to_handle_at": 264,
    "swapon": 224,
    "swapoff": 225,
    "reboot": 142,
    "clock_settime": 112,
    "clock_adjtime": 266,
    "settimeofday": 170,
    "adjtimex": 171,
    "acct": 89,
    "quotactl": 60,
    "quotactl_fd": 443,
    "syslog": 116,
    "lookup_dcookie": 18,
    "mount_setattr": 442,
    "move_mount": 429,
    "open_tree": 428,
    "fsopen": 430,
    "fsconfig": 431,
    "fsmount": 432,
    "fspick": 433,
    "vhangup": 58,
    "nfsservctl": 42,
    "kcmp": 272,
    "fanotify_init": 262,
    "pidfd_getfd": 438,
    "sethostname": 161,
    "setdomainname": 162,
}


def _stmt(code: int, k: int) -> tuple[int, int, int, int]:
    return (code, 0, 0, k)


def _jump(code: int, k: int, jt: int, jf: int) -> tuple[int, int, int, int]:
    if not (0 <= jt <= 255 and 0 <= jf <= 255):
        raise ValueError(f"BPF jump offset out of range: jt={jt} jf={jf}")
    return (code, jt, jf, k)


def _errno(number: int) -> int:
    return _RET_ERRNO | (number & 0xFFFF)


def _arch_block(
    numbers: Mapping[str, int], *, x32: bool, kill_unix_sockets: bool
) -> list[tuple[int, int, int, int]]:
    """The instructions for one architecture; every path ends in a return."""
    block = [_stmt(_BPF_LD_W_ABS, _OFFSET_NR)]
    if x32:
        block += [
            _jump(_BPF_JGE_K, _X32_SYSCALL_BIT, 0, 1),
            _stmt(_BPF_RET_K, _RET_KILL_PROCESS),
        ]
    if kill_unix_sockets:
        block += [
            _jump(_BPF_JEQ_K, numbers["socket"], 0, 1),
            _stmt(_BPF_RET_K, _RET_KILL_PROCESS),
        ]
    else:
        block += [
            # socket(): look at the address family (this reloads the accumulator, so every
            # path below returns).
            _jump(_BPF_JEQ_K, numbers["socket"], 0, 4),
            _stmt(_BPF_LD_W_ABS, _OFFSET_ARG0_LOW),
            _jump(_BPF_JEQ_K, _AF_UNIX, 0, 1),
            _stmt(_BPF_RET_K, _errno(errno.EACCES)),
            _stmt(_BPF_RET_K, _RET_KILL_PROCESS),
        ]
    for name in DENIED_SYSCALLS:
        if name in numbers:
            block += [
                _jump(_BPF_JEQ_K, numbers[name], 0, 1),
                _stmt(_BPF_RET_K, _errno(errno.EPERM)),
            ]
    block += [
        _jump(_BPF_JEQ_K, numbers["clone3"], 0, 1),
        _stmt(_BPF_RET_K, _errno(errno.ENOSYS)),
        # clone(): look at the flags (this reloads the accumulator, so it comes last).
        _jump(_BPF_JEQ_K, numbers["clone"], 0, 3),
        _stmt(_BPF_LD_W_ABS, _OFFSET_ARG0_LOW),
        _jump(_BPF_JSET_K, _CLONE_NAMESPACE_FLAGS, 0, 1),
        _stmt(_BPF_RET_K, _errno(errno.EPERM)),
        _stmt(_BPF_RET_K, _RET_ALLOW),
    ]
    return block


def _assemble(
    arches: Iterable[tuple[int, list[tuple[int, int, int, int]]]],
) -> list[tuple[int, int, int, int]]:
    program = [_stmt(_BPF_LD_W_ABS, _OFFSET_ARCH)]
    for audit_arch, block in arches:
        # Not this architecture: jump over its block to the next architecture test. The
        # accumulator still holds the architecture there, since the block was not entered.
        program.append(_jump(_BPF_JEQ_K, audit_arch, 0, len(block)))
        program += block
    program.append(_stmt(_BPF_RET_K, _RET_KILL_PROCESS))
    return program


def build_filter(*, kill_unix_sockets: bool = False) -> bytes:
    """Return the filter as a packed array of ``struct sock_filter``, ready for bwrap.

    With ``kill_unix_sockets`` a ``socket(AF_UNIX, ...)`` kills the bot like any other
    ``socket()``; without it, it fails with ``EACCES`` (see the module documentation).

    >>> import struct
    >>> struct.unpack_from("=HBBI", build_filter())  # load the architecture first
    (32, 0, 0, 4)
    """
    program = _assemble(
        [
            (
                _AUDIT_ARCH_X86_64,
                _arch_block(_X86_64, x32=True, kill_unix_sockets=kill_unix_sockets),
            ),
            (
                _AUDIT_ARCH_AARCH64,
                _arch_block(_AARCH64, x32=False, kill_unix_sockets=kill_unix_sockets),
            ),
        ]
    )
    if len(program) > 4096:  # BPF_MAXINSNS
        raise ValueError("seccomp program too long")
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


_PROGRAMS = {kill: build_filter(kill_unix_sockets=kill) for kill in (False, True)}


def filter_pipe(*, kill_unix_sockets: bool = False) -> int:
    """Return the read end of a pipe holding the filter (close-on-exec; pass it explicitly).

    bwrap reads ``--seccomp FD`` to the end, so every launch needs its own descriptor; a pipe
    is the cheapest (the program is a few kilobytes, well under the pipe buffer).
    """
    read_end, write_end = os.pipe()
    try:
        view = memoryview(_PROGRAMS[kill_unix_sockets])
        while view:
            view = view[os.write(write_end, view) :]
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end
