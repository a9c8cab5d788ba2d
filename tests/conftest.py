"""Shared fixtures: sandboxes for tests that play real games.

They use slot uids, a cgroup name and a state directory of their own (not those of the
sandbox's own tests, nor of another test run on the host: the block of uids is taken by lock),
close every sandbox they made when the test ends, and then check that no process or cgroup of
their slots is left.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.signals import connection_created

from arena.referee import bot_library
from arena.referee.sandbox import (
    HOST_SLOT_LOCKS,
    ProtectionLevel,
    Sandbox,
    SandboxSettings,
    cgroups,
    probe,
    processes_of_uids,
)

# Browser tests' fixtures (Playwright on the system's Chromium): tests/browser.py.
pytest_plugins = ["tests.browser"]


def _no_idle_limit_in_tests(sender: Any, connection: Any, **kwargs: Any) -> None:
    """pytest-django holds each test in one transaction, idle while the test plays a game in
    this process: the limit meant for the arena's own short transactions
    (``DB_IDLE_TRANSACTION_TIMEOUT_S``) would end the test's session. The arena's processes
    that tests start keep it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET idle_in_transaction_session_timeout = 0")


connection_created.connect(_no_idle_limit_in_tests, dispatch_uid="tests-no-idle-limit")


class QuickPasswordHasher(PBKDF2PasswordHasher):
    """PBKDF2 with few iterations, for the accounts the tests make by the hundred: a hash at
    Django's million iterations costs about a second of CPU on a busy machine, and was most of
    the suite's time. The hash names its algorithm and its iterations, so every process the
    tests start (a worker, a web server on the real settings) still checks it; a login there
    upgrades it to the full count."""

    iterations = 1000


with contextlib.suppress(ImproperlyConfigured):  # a run without Django's settings (none hash)
    settings.PASSWORD_HASHERS = [
        "tests.conftest.QuickPasswordHasher",
        *(h for h in settings.PASSWORD_HASHERS if h != "tests.conftest.QuickPasswordHasher"),
    ]

# The bots under tests/data/bots/ are programs, not test modules: importing one to look for
# doctests would run it (a fork bomb, a bot that waits for ever on its input...).
collect_ignore_glob = ["data/bots/*"]


def _turns_lock() -> Path | None:
    """The lock the processes of one pytest-xdist run share, or None without pytest-xdist."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    return Path(tempfile.gettempdir()) / f"yinsh-tests-{run}-workers.lock" if run else None


@pytest.fixture(autouse=True)
def _real_workers_take_turns(request: pytest.FixtureRequest) -> Iterator[None]:
    """In two processes (``./dev test`` runs pytest-xdist's ``-n 2``), the tests that start
    real workers (marked ``worker``) run one at a time, as they would alone, each beside the
    rest of the suite."""
    path = _turns_lock()
    if path is None or request.node.get_closest_marker("worker") is None:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


#: How long a test on the live server waits, once it is over, for the requests still running there.
LIVE_REQUESTS_WAIT_S = 60.0


def live_requests() -> list[threading.Thread]:
    """The live server's requests still being answered in this process: Django's server
    answers each in a thread of its own (socketserver's ``process_request_thread``)."""
    return [
        t
        for t in threading.enumerate()
        if t.name.endswith("(process_request_thread)") and t.is_alive()
    ]


def wait_for_live_requests(timeout: float) -> list[threading.Thread]:
    """Wait up to ``timeout`` seconds for :func:`live_requests` to end; those still running."""
    deadline = time.monotonic() + timeout
    for thread in live_requests():
        thread.join(max(0.0, deadline - time.monotonic()))
    return live_requests()


@pytest.fixture(autouse=True)
def _live_server_done(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test on the live server ends when the requests its pages or clients made have ended:
    the page is closed by then, but an event stream or a long poll goes on in the server until
    it notices, querying the database. Emptying the tables for the next test meanwhile
    (TRUNCATE) can deadlock with such a query on PostgreSQL, which then refuses the flush and
    leaves the rows behind. Set up after the test's database (so torn down before its flush)
    and before its browser (so torn down after the page closed)."""
    if "live_server" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("transactional_db")
    yield
    wait_for_live_requests(LIVE_REQUESTS_WAIT_S)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    # The first process to finish removes the lock: the other has no one left to wait for.
    path = _turns_lock()
    if path is not None:
        path.unlink(missing_ok=True)


def skip_unless_required(why: str, *, detail: str = "") -> None:
    """Skip a test this host cannot run; where the full sandbox is required
    (``ARENA_REQUIRE_FULL_SANDBOX=1``, as CI sets on its root machine) fail it instead, so that
    nothing is ever skipped there."""
    if full_sandbox_required():
        pytest.fail(f"{why}: {detail}" if detail else why)
    pytest.skip(why)


def full_sandbox_required() -> bool:
    return os.environ.get("ARENA_REQUIRE_FULL_SANDBOX") == "1"


def require_full_sandbox(report: Any) -> None:
    """Skip a test that needs protection level FULL on a host without it (a non-root laptop),
    with the probe's explanation; where FULL is required (``ARENA_REQUIRE_FULL_SANDBOX=1``, as
    CI sets on its root machine) fail it instead, so no sandbox test is ever skipped there."""
    if report.level is ProtectionLevel.FULL:
        return
    why = (
        f"needs protection level FULL (root, bubblewrap, cgroups); this host offers "
        f"{report.level.value} (python -m arena.referee.sandbox probe says why)"
    )
    skip_unless_required(why, detail=report.describe())


def require_root(why: str) -> None:
    """Skip a test that must run as root (it checks the bots' own host uids) when it does not,
    or fail it where FULL protection is required (``ARENA_REQUIRE_FULL_SANDBOX=1``)."""
    if os.geteuid() == 0:
        return
    skip_unless_required(f"needs root: {why}")


@pytest.fixture(scope="session", autouse=True)
def development_switch_below_full() -> Iterator[None]:
    """On a host without FULL protection (a laptop, not root), tests that play uploaded
    (untrusted) bots run with the explicit development switch, as a developer there would:
    ``ARENA_ALLOW_UNSANDBOXED=1`` for the processes the tests start and the setting for this
    one. The sandbox's own tests skip there with the probe's explanation. Where FULL is
    required (``ARENA_REQUIRE_FULL_SANDBOX=1``, CI) or available, nothing changes."""
    from django.conf import settings

    state = tempfile.mkdtemp(prefix="yinsh-probe-")
    try:
        level = probe(SandboxSettings(state_dir=state)).level
    finally:
        shutil.rmtree(state, ignore_errors=True)
    if level is ProtectionLevel.FULL or full_sandbox_required():
        yield
        return
    previous_env = os.environ.get("ARENA_ALLOW_UNSANDBOXED")
    previous_setting = settings.ALLOW_UNSANDBOXED
    os.environ["ARENA_ALLOW_UNSANDBOXED"] = "1"
    settings.ALLOW_UNSANDBOXED = True
    try:
        yield
    finally:
        settings.ALLOW_UNSANDBOXED = previous_setting
        if previous_env is None:
            os.environ.pop("ARENA_ALLOW_UNSANDBOXED", None)
        else:
            os.environ["ARENA_ALLOW_UNSANDBOXED"] = previous_env


GAMES_BASE_UID = 64640  # clear of 64600-64615, the one block test runs used to share
GAMES_SLOTS = 16
GAMES_BLOCKS = 8  # blocks of slot uids: 64640-64767
GAMES_CGROUP = "yinsh-arena-games-test"
_held_block: list[int] = []  # the descriptor holding this run's block, open until it exits


@functools.cache
def games_uids() -> range:
    """This process's block of slot uids, which no other test run on the host holds: two runs
    at once (two checkouts, CI and a developer) never take each other's bots for leftovers.
    Taken on first use, by a lock beside the sandbox's own slot locks, held for as long as
    this process lives."""
    first = _games_block()
    return range(first, first + GAMES_SLOTS)


def _games_block() -> int:
    if os.geteuid() != 0:
        return GAMES_BASE_UID  # no per-slot uids without root
    directory = Path(HOST_SLOT_LOCKS)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    for block in range(GAMES_BLOCKS):
        fd = os.open(directory / f"test-games-block-{block}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        _held_block.append(fd)
        return GAMES_BASE_UID + block * GAMES_SLOTS
    raise RuntimeError(f"all {GAMES_BLOCKS} blocks of test slot uids are held by other runs")


def games_leftovers() -> tuple[dict[int, list[int]], list[Path]]:
    """Live processes and cgroups of this run's game slots: none once its sandboxes closed."""
    processes = processes_of_uids(games_uids())
    layout, _ = cgroups.detect()
    if layout is None:
        return processes, []
    names = {f"slot-{uid}" for uid in games_uids()}
    groups = []
    for hierarchy in layout.hierarchies():
        base = hierarchy / GAMES_CGROUP
        if base.is_dir():
            groups += [p for p in base.iterdir() if p.is_dir() and p.name in names]
    return processes, groups


@pytest.fixture(scope="session")
def games_state_dir() -> Iterator[str]:
    directory = tempfile.mkdtemp(prefix="yinsh-games-test-")
    os.chmod(directory, 0o711)  # staged bot folders must be reachable by the slot uids
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


def games_settings(state_dir: str, **overrides: Any) -> SandboxSettings:
    values: dict[str, Any] = {
        "state_dir": state_dir,
        "first_uid": games_uids().start,
        "slots": GAMES_SLOTS,
        "cgroup_name": GAMES_CGROUP,
        "memory_mb": 256,
        "cpu_seconds": 60.0,
    }
    values.update(overrides)
    return SandboxSettings(**values)


@pytest.fixture
def game_sandbox(games_state_dir: str) -> Iterator[Callable[..., Sandbox]]:
    """``make(level=None, **settings)``: a sandbox with the bot library, closed and checked.

    ``level`` None is the host's best level; untrusted bots are allowed below FULL.
    """
    made: list[Sandbox] = []

    def make(level: ProtectionLevel | None = None, **overrides: Any) -> Sandbox:
        if level is None:
            level = probe(games_settings(games_state_dir)).level
        overrides.update(bot_library(level, **overrides))
        sandbox = Sandbox(
            games_settings(games_state_dir, **overrides),
            level=level,
            allow_unsandboxed=level is not ProtectionLevel.FULL,
        )
        made.append(sandbox)
        return sandbox

    yield make
    for sandbox in made:
        sandbox.close()
    processes, groups = games_leftovers()
    assert not processes, f"processes of a bot survived the test: {processes}"
    assert not groups, f"cgroups of a bot survived the test: {groups}"


@pytest.fixture
def sandboxed(game_sandbox: Callable[..., Sandbox]) -> Callable[..., Sandbox]:
    """Make a sandbox at the host's best level."""
    return game_sandbox


@pytest.fixture
def full_sandbox(
    game_sandbox: Callable[..., Sandbox], games_state_dir: str
) -> Callable[..., Sandbox]:
    """Make a sandbox at level FULL (see :func:`require_full_sandbox`)."""
    require_full_sandbox(probe(games_settings(games_state_dir)))
    return lambda **overrides: game_sandbox(ProtectionLevel.FULL, **overrides)


@pytest.fixture
def unsandboxed(game_sandbox: Callable[..., Sandbox]) -> Callable[..., Sandbox]:
    """Make a level-NONE sandbox (plain processes), for trusted bots."""
    return lambda **overrides: game_sandbox(ProtectionLevel.NONE, **overrides)


@pytest.fixture
def breakable_sandbox() -> Iterator[Callable[[], tuple[Sandbox, Callable[[], None]]]]:
    """A FULL sandbox with a state folder of its own, and a function that breaks it the way a
    wrong deployment does: the state folder (where the staged copies of bot folders live) made
    0700, owned by root, after the sandbox was made. Closed and checked when the test ends."""
    require_full_sandbox(probe(games_settings(tempfile.gettempdir())))
    require_root("the slot uids must be refused by the state folder's mode")
    made: list[tuple[Sandbox, Path]] = []

    def make() -> tuple[Sandbox, Callable[[], None]]:
        state = Path(tempfile.mkdtemp(prefix="yinsh-broken-state-"))
        state.chmod(0o711)
        level = ProtectionLevel.FULL
        sandbox = Sandbox(games_settings(str(state), **bot_library(level)), level=level)
        made.append((sandbox, state))
        assert os.stat(state).st_uid == 0
        return sandbox, lambda: state.chmod(0o700)

    yield make
    for sandbox, state in made:
        sandbox.close()
        shutil.rmtree(state, ignore_errors=True)
    processes, _ = games_leftovers()
    assert not processes, f"processes of a bot survived the test: {processes}"
