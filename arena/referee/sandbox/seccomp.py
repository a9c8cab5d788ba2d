"""The seccomp filter loaded into every sandboxed bot, as a classic BPF program.

The program is built here in pure Python (no libseccomp bindings) and handed to bubblewrap
with ``--seccomp FD``. The namespaces do the isolating (the bot's network namespace holds only
its own loopback; its mount namespace shows no host socket); the filter takes away what stays
dangerous inside them, and does it so that normal runtimes survive: a refused call fails with
the error the kernel itself gives when a feature is missing or not permitted, which runtimes
handle. See ``docs/sandbox.md`` for the reasons behind each entry. The filter

* kills the whole bot process (``SECCOMP_RET_KILL_PROCESS``, the bot dies of ``SIGSYS``) on a
  system call of another ABI: an architecture it was not built for (32-bit x86, 32-bit ARM),
  whose numbers would dodge the checks below, and the x32 ABI. Nothing else kills;
* lets ``socket()`` create sockets of the families a program needs in its own network
  namespace: ``AF_UNIX``, ``AF_INET`` and ``AF_INET6`` (protocols 0, TCP, UDP, ICMP, ICMPv6),
  ``AF_NETLINK`` with ``NETLINK_ROUTE`` (the C library's ``getaddrinfo`` and ``getifaddrs``).
  Any other family fails with ``EAFNOSUPPORT`` (``AF_VSOCK`` reaches a hypervisor outside every
  network namespace, ``AF_PACKET``, ``AF_ALG``, ``AF_KEY``, TIPC, RDS and the rest are kernel
  attack surface, often a module loaded on demand), any other protocol with
  ``EPROTONOSUPPORT``; ``socketpair()`` of a family other than ``AF_UNIX`` with
  ``EAFNOSUPPORT``;
* fails the escape and administration calls (:data:`DENIED_SYSCALLS`) with ``EPERM``, and
  ``clone()`` with any namespace flag;
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
    "ARCHITECTURES",
    "DENIED_SYSCALLS",
    "INET_PROTOCOLS",
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
# args[n] is at 16 + 8 n; its low half first, both supported architectures being little-endian.
_OFFSET_ARG0_LOW = 16
_OFFSET_ARG2_LOW = 32

_AUDIT_ARCH_X86_64 = 0xC000003E
_AUDIT_ARCH_AARCH64 = 0xC00000B7
_X32_SYSCALL_BIT = 0x40000000

# CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID
# | CLONE_NEWNET. (CLONE_NEWTIME shares its bit with the exit signal in clone().)
_CLONE_NAMESPACE_FLAGS = 0x7E020000

INSTRUCTION_SIZE = 8
"""Bytes per instruction (struct sock_filter)."""

# Address families (linux/socket.h) and protocols (linux/in.h, linux/netlink.h).
_AF_UNIX = 1
_AF_INET = 2
_AF_INET6 = 10
_AF_NETLINK = 16
_NETLINK_ROUTE = 0
INET_PROTOCOLS: tuple[int, ...] = (0, 6, 17, 1, 58)
"""Protocols ``socket(AF_INET or AF_INET6, ...)`` may ask for: the type's default, TCP, UDP,
ICMP and ICMPv6 (ping sockets; raw ones need a capability the bot lacks)."""

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


Instruction = tuple[int, int, int, int]


class _Block:
    """Instructions whose jumps name their targets; :meth:`resolve` turns names into offsets."""

    def __init__(self) -> None:
        self._items: list[tuple[int, int, str | None, str | None]] = []
        self._labels: dict[str, int] = {}

    def stmt(self, code: int, k: int) -> None:
        self._items.append((code, k, None, None))

    def jump(self, code: int, k: int, true: str | None, false: str | None = None) -> None:
        """A conditional jump to label ``true`` or ``false`` (None: the next instruction)."""
        self._items.append((code, k, true, false))

    def ret(self, value: int) -> None:
        self.stmt(_BPF_RET_K, value)

    def load(self, offset: int) -> None:
        self.stmt(_BPF_LD_W_ABS, offset)

    def label(self, name: str) -> None:
        if name in self._labels:
            raise ValueError(f"BPF label {name} defined twice")
        self._labels[name] = len(self._items)

    def resolve(self) -> list[Instruction]:
        program = []
        for index, (code, k, true, false) in enumerate(self._items):
            jt, jf = (0 if t is None else self._labels[t] - index - 1 for t in (true, false))
            if not (0 <= jt <= 255 and 0 <= jf <= 255):
                raise ValueError(f"BPF jump offset out of range: jt={jt} jf={jf}")
            program.append((code, jt, jf, k))
        return program


def _errno(number: int) -> int:
    return _RET_ERRNO | (number & 0xFFFF)


def _arch_block(numbers: Mapping[str, int], *, x32: bool) -> list[Instruction]:
    """The instructions for one architecture; every path ends in a return."""
    block = _Block()
    block.load(_OFFSET_NR)
    if x32:
        block.jump(_BPF_JGE_K, _X32_SYSCALL_BIT, "kill")
    block.jump(_BPF_JEQ_K, numbers["socket"], "socket")
    block.jump(_BPF_JEQ_K, numbers["socketpair"], "socketpair")
    for name in DENIED_SYSCALLS:
        if name in numbers:
            block.jump(_BPF_JEQ_K, numbers[name], "eperm")
    block.jump(_BPF_JEQ_K, numbers["clone3"], "enosys")
    block.jump(_BPF_JEQ_K, numbers["clone"], "clone")
    block.ret(_RET_ALLOW)

    # socket(family, type, protocol): the family, then the protocol.
    block.label("socket")
    block.load(_OFFSET_ARG0_LOW)
    block.jump(_BPF_JEQ_K, _AF_UNIX, "allow")
    block.jump(_BPF_JEQ_K, _AF_INET, "inet")
    block.jump(_BPF_JEQ_K, _AF_INET6, "inet")
    block.jump(_BPF_JEQ_K, _AF_NETLINK, "netlink")
    block.ret(_errno(errno.EAFNOSUPPORT))
    block.label("inet")
    block.load(_OFFSET_ARG2_LOW)
    for protocol in INET_PROTOCOLS:
        block.jump(_BPF_JEQ_K, protocol, "allow")
    block.ret(_errno(errno.EPROTONOSUPPORT))
    block.label("netlink")
    block.load(_OFFSET_ARG2_LOW)
    block.jump(_BPF_JEQ_K, _NETLINK_ROUTE, "allow")
    block.ret(_errno(errno.EPROTONOSUPPORT))

    # socketpair(family, ...): only unix sockets come in pairs; others would only load modules.
    block.label("socketpair")
    block.load(_OFFSET_ARG0_LOW)
    block.jump(_BPF_JEQ_K, _AF_UNIX, "allow")
    block.ret(_errno(errno.EAFNOSUPPORT))

    # clone(flags, ...): no new namespace.
    block.label("clone")
    block.load(_OFFSET_ARG0_LOW)
    block.jump(_BPF_JSET_K, _CLONE_NAMESPACE_FLAGS, "eperm")
    block.label("allow")
    block.ret(_RET_ALLOW)
    block.label("eperm")
    block.ret(_errno(errno.EPERM))
    block.label("enosys")
    block.ret(_errno(errno.ENOSYS))
    block.label("kill")
    block.ret(_RET_KILL_PROCESS)
    return block.resolve()


def _assemble(arches: Iterable[tuple[int, list[Instruction]]]) -> list[Instruction]:
    program: list[Instruction] = [(_BPF_LD_W_ABS, 0, 0, _OFFSET_ARCH)]
    for audit_arch, block in arches:
        # Not this architecture: jump over its block to the next architecture test. The
        # accumulator still holds the architecture there, since the block was not entered.
        if len(block) > 255:
            raise ValueError("BPF block too long for one jump")
        program.append((_BPF_JEQ_K, 0, len(block), audit_arch))
        program += block
    program.append((_BPF_RET_K, 0, 0, _RET_KILL_PROCESS))
    return program


ARCHITECTURES: Mapping[str, tuple[int, Mapping[str, int]]] = {
    "x86_64": (_AUDIT_ARCH_X86_64, _X86_64),
    "aarch64": (_AUDIT_ARCH_AARCH64, _AARCH64),
}
"""The architectures the filter lets run: their ``AUDIT_ARCH_*`` value and system call numbers
(of the calls the filter looks at)."""


def build_filter() -> bytes:
    """Return the filter as a packed array of ``struct sock_filter``, ready for bwrap.

    >>> import struct
    >>> struct.unpack_from("=HBBI", build_filter())  # load the architecture first
    (32, 0, 0, 4)
    """
    program = _assemble(
        (audit_arch, _arch_block(numbers, x32=audit_arch == _AUDIT_ARCH_X86_64))
        for audit_arch, numbers in ARCHITECTURES.values()
    )
    if len(program) > 4096:  # BPF_MAXINSNS
        raise ValueError("seccomp program too long")
    return b"".join(struct.pack("=HBBI", *instruction) for instruction in program)


_PROGRAM = build_filter()


def filter_pipe() -> int:
    """Return the read end of a pipe holding the filter (close-on-exec; pass it explicitly).

    bwrap reads ``--seccomp FD`` to the end, so every launch needs its own descriptor; a pipe
    is the cheapest (the program is a few hundred bytes, well under the pipe buffer).
    """
    read_end, write_end = os.pipe()
    try:
        view = memoryview(_PROGRAM)
        while view:
            view = view[os.write(write_end, view) :]
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end
