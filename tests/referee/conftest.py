"""Fixtures for the sandbox tests (``sandbox_*``, ``make_sandbox``, ``host_listeners``).

Test sandboxes use slot uids, a cgroup name and a state directory of their own, so they never
touch the bots of a real referee on the same host; each test session takes its own block of
slot uids, so two sessions running at once (two developers, or CI and a developer) never share
a slot either. Every sandbox a test makes is closed afterwards, and the teardown checks that no
process, cgroup or staged copy is left.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import socket
import tempfile
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.referee.sandbox import (
    HOST_SLOT_LOCKS,
    ProtectionLevel,
    Sandbox,
    SandboxSettings,
    cgroups,
    probe,
    processes_of_uids,
)
from tests.conftest import require_full_sandbox

SANDBOX_TEST_BASE_UID = 64500
SANDBOX_TEST_SLOTS = 8
SANDBOX_TEST_SESSIONS = 8  # blocks of slot uids: 64500-64563
SANDBOX_TEST_CGROUP = "yinsh-arena-test"


def sandbox_slot_cgroups(uids: range) -> list[Path]:
    """Slot cgroup directories of the test slots ``uids`` that exist."""
    layout, _ = cgroups.detect()
    if layout is None:
        return []
    names = {f"slot-{uid}" for uid in uids}
    found: list[Path] = []
    for hierarchy in layout.hierarchies():
        base = hierarchy / SANDBOX_TEST_CGROUP
        if base.is_dir():
            found += [p for p in base.iterdir() if p.is_dir() and p.name in names]
    return found


def sandbox_leftovers(uids: range) -> tuple[dict[int, list[int]], list[Path]]:
    """Live processes and cgroups of the test slots ``uids``: none once sandboxes are closed."""
    return processes_of_uids(uids), sandbox_slot_cgroups(uids)


@pytest.fixture(scope="session")
def sandbox_test_uids() -> Iterator[range]:
    """This session's slot uids: a block no other test session on the host holds."""
    if os.geteuid() != 0:
        yield range(SANDBOX_TEST_BASE_UID, SANDBOX_TEST_BASE_UID + SANDBOX_TEST_SLOTS)
        return
    directory = Path(HOST_SLOT_LOCKS)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for block in range(SANDBOX_TEST_SESSIONS):
        fd = os.open(directory / f"test-block-{block}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            first = SANDBOX_TEST_BASE_UID + block * SANDBOX_TEST_SLOTS
            yield range(first, first + SANDBOX_TEST_SLOTS)
        finally:
            os.close(fd)
        return
    pytest.fail(f"all {SANDBOX_TEST_SESSIONS} blocks of test slot uids are held by other sessions")


@pytest.fixture(scope="session")
def sandbox_state_dir() -> Iterator[str]:
    """A state directory shared by every test sandbox of the session."""
    directory = tempfile.mkdtemp(prefix="yinsh-sandbox-test-")
    os.chmod(directory, 0o711)  # staged bot folders must be reachable by the slot uids
    yield directory
    shutil.rmtree(directory, ignore_errors=True)
    layout, _ = cgroups.detect()
    if layout is not None:
        for hierarchy in layout.hierarchies():
            with contextlib.suppress(OSError):  # busy while another session uses it
                (hierarchy / SANDBOX_TEST_CGROUP).rmdir()


@pytest.fixture
def sandbox_test_settings(
    sandbox_state_dir: str, sandbox_test_uids: range
) -> Callable[..., SandboxSettings]:
    """Build test SandboxSettings: small limits, this session's uids, overridable per test."""

    def build(**overrides: Any) -> SandboxSettings:
        values: dict[str, Any] = {
            "state_dir": sandbox_state_dir,
            "first_uid": sandbox_test_uids.start,
            "slots": len(sandbox_test_uids),
            "cgroup_name": SANDBOX_TEST_CGROUP,
            "memory_mb": 256,
            "cpu_seconds": 60.0,
        }
        values.update(overrides)
        return SandboxSettings(**values)

    return build


@pytest.fixture
def make_sandbox(
    sandbox_test_settings: Callable[..., SandboxSettings], sandbox_test_uids: range
) -> Iterator[Callable[..., Sandbox]]:
    """Make sandboxes that are closed, and checked for leftovers, when the test ends."""
    made: list[Sandbox] = []

    def make(
        level: ProtectionLevel | None = None, allow_unsandboxed: bool = False, **overrides: Any
    ) -> Sandbox:
        if level is ProtectionLevel.FULL:
            require_full_sandbox(probe(sandbox_test_settings(**overrides)))
        sandbox = Sandbox(
            sandbox_test_settings(**overrides), level=level, allow_unsandboxed=allow_unsandboxed
        )
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()
    processes, groups = sandbox_leftovers(sandbox_test_uids)
    assert not processes, f"processes of sandbox uids survived the test: {processes}"
    assert not groups, f"cgroups survived the test: {groups}"
    for sandbox in made:
        assert not sandbox.staging_dir.exists(), "a staged bot folder survived its sandbox"


@dataclass
class HostListeners:
    """Servers listening on the host, as a database or a broker would, for bots to try.

    Each accepts connections (the kernel completes them from its backlog): a TCP server on every
    address of the host (reached at ``tcp``), a unix socket file in a folder of its own that
    anyone may enter (``unix_path``, mode 0777, as PostgreSQL's), and an abstract unix socket
    (``abstract``, a name without a file).
    """

    tcp: list[tuple[str, int]]
    unix_path: Path
    abstract: str

    def env(self, *, unix_paths: tuple[str, ...] = ()) -> tuple[tuple[str, str], ...]:
        """The environment of tests/data/bots/hostile/network_client aimed at these servers (and at
        ``unix_paths``, places where a bot might see the socket file)."""
        return (
            ("NETWORK_TCP", json.dumps(self.tcp)),
            ("NETWORK_UNIX", json.dumps([str(self.unix_path), *unix_paths])),
            ("NETWORK_ABSTRACT", json.dumps([self.abstract])),
        )


def _outward_address() -> str | None:
    """The host's own address on its way out (no packet is sent), if it has one."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe_socket:
        try:
            probe_socket.connect(("192.0.2.1", 9))  # TEST-NET-1: only the route is looked up
        except OSError:
            return None
        address: str = probe_socket.getsockname()[0]
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.fixture
def host_listeners(tmp_path: Path) -> Iterator[HostListeners]:
    """:class:`HostListeners`, closed when the test ends."""
    folder = tmp_path / "sockets"
    folder.mkdir()
    folder.chmod(0o755)
    servers = []
    try:
        tcp = socket.create_server(("0.0.0.0", 0), backlog=64)
        servers.append(tcp)
        port = tcp.getsockname()[1]
        targets = [("127.0.0.1", port)]
        outward = _outward_address()
        if outward is not None:
            targets.append((outward, port))
        unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        servers.append(unix)
        unix.bind(str(folder / "server.sock"))
        (folder / "server.sock").chmod(0o777)
        unix.listen(64)
        abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        servers.append(abstract)
        name = f"yinsh-test-{uuid.uuid4().hex}"
        abstract.bind("\0" + name)
        abstract.listen(64)
        yield HostListeners(targets, folder / "server.sock", name)
    finally:
        for server in servers:
            server.close()
