"""Fixtures of the arena tests: users, bot versions made from the real example bots, a real
Celery worker (``worker``, with ``wait_for``), and an isolated bot store, cache, sandbox state
and Celery queue for every test run.

Another arena may run on the same host (a ``./dev start`` beside ``./dev test``): its workers
use the same slot uids as the workers tests start (slots are locked host-wide, so they never
share one). A test that looks for bots left behind looks among the processes it started
(:func:`adopting_orphans`, :func:`bots_started_here`), never at every process of those uids.

The same tests run on the embedded defaults (SQLite, the SQLAlchemy broker) and, when
``DATABASE_URL`` and ``REDIS_URL`` are set, on PostgreSQL and Redis.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from arena.bots import services as bot_services
from arena.bots import store
from arena.bots.models import Bot, BotVersion
from arena.celery import app as celery_app
from arena.local.management.commands.runarena import declare_queues
from arena.referee.sandbox import SandboxSettings
from arena.referee.sandbox.procfs import descendants, proc_table, real_uid

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "bots"
TEST_BOTS = ROOT / "tests" / "data" / "bots"

#: Everything a test run writes outside the database lives here (removed at the end).
RUN_DIR = Path(tempfile.mkdtemp(prefix="arena-tests-"))
RUN_DIR.chmod(0o711)  # the sandbox's state under it must be reachable by the slot uids
#: ``ARENA_VAR_DIR`` of the processes tests start (and the sandbox state of this one).
VAR_DIR = RUN_DIR / "var"
#: This run's own Celery queue, so that a local arena running meanwhile never sees its tasks.
QUEUE = f"arena-test-{uuid.uuid4().hex[:8]}"
BROKER_URL = (
    django_settings.CELERY_BROKER_URL
    if django_settings.REDIS_URL
    else f"sqla+sqlite:///{RUN_DIR / 'broker.sqlite3'}"
)

celery_app.conf.task_default_queue = QUEUE
celery_app.conf.broker_url = BROKER_URL
# The periodic tasks and the notifications' tasks go to the periodic queue: this run's own, as
# its workers' (ARENA_CELERY_QUEUE in worker_env), never a local arena's.
django_settings.PERIODIC_QUEUE = f"{QUEUE}.periodic"
#: The games of remote bots go to this run's remote queue (its workers compute the same name).
django_settings.REMOTE_QUEUE = f"{QUEUE}.remote"
for _entry in django_settings.CELERY_BEAT_SCHEDULE.values():
    _entry["options"]["queue"] = django_settings.PERIODIC_QUEUE


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if django_settings.REDIS_URL:
        try:
            import redis

            client = redis.Redis.from_url(django_settings.REDIS_URL)
            for queue in (QUEUE, f"{QUEUE}.periodic", f"{QUEUE}.remote"):
                client.delete(queue, f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
        except Exception:  # Redis went away: nothing to tidy
            pass
    shutil.rmtree(RUN_DIR, ignore_errors=True)


@pytest.fixture(scope="session", autouse=True)
def _queues_declared() -> None:
    """This run's queues (and the broker file's tables), declared once before any test starts
    a worker: workers starting at once in a new broker file could each try to make them, and
    one would die (see :func:`~arena.local.management.commands.runarena.declare_queues`)."""
    declare_queues([QUEUE, f"{QUEUE}.periodic", f"{QUEUE}.remote"], BROKER_URL)


@pytest.fixture(autouse=True)
def _isolated_files(settings: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A bot store and cache of each test's own (workers started by tests get the same), and
    the run's sandbox state."""
    base = tmp_path_factory.mktemp("files")
    settings.BOT_STORE_DIR = base / "store"
    settings.BOT_CACHE_DIR = base / "cache"
    settings.BOT_BUILD_DIR = base / "builds"
    settings.SANDBOX_STATE_DIR = VAR_DIR / "sandbox"


@pytest.fixture(autouse=True)
def _open_tournaments(settings: Any) -> None:
    """The tests' users may organise tournaments (ARENA_OPEN_TOURNAMENTS, on only with debug
    by default); the test of the organisers group turns it off."""
    settings.OPEN_TOURNAMENTS = True


@pytest.fixture(autouse=True)
def _no_throttles(settings: Any) -> None:
    """No throttles (tests of the limits set them), and a cache of each test's own: counts and
    cached pages never pass from one test, or one test run, to another (Redis is shared)."""
    settings.THROTTLE_RATES = dict.fromkeys(django_settings.THROTTLE_RATES, "")
    settings.CACHES = {
        "default": {
            **django_settings.CACHES["default"],
            "KEY_PREFIX": f"arena-test-{uuid.uuid4().hex[:12]}",
        }
    }


@pytest.fixture
def user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("alice", password="a-long-password-1")


@pytest.fixture
def other_user(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user("bob", password="a-long-password-2")


def packed(folder: Path) -> bytes:
    """A bot folder as .tar.gz bytes."""
    return bot_services.pack_folder(folder)


def zipped(files: dict[str, bytes | str], *, modes: dict[str, int] | None = None) -> bytes:
    """A zip archive of the given files (name -> content)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = ((modes or {}).get(name, 0o100644)) << 16
            zf.writestr(info, data)
    return buf.getvalue()


def zipped_folder(folder: Path) -> bytes:
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }
    return zipped(files)


def targz(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def upload(data: bytes, name: str) -> io.BytesIO:
    f = io.BytesIO(data)
    f.name = name  # type: ignore[attr-defined]
    f.size = len(data)  # type: ignore[attr-defined]
    return f


def make_version(
    owner: Any,
    name: str,
    *,
    folder: Path | None = None,
    status: str = BotVersion.Status.ACTIVE,
    trusted: bool = False,
    variants: list[str] | None = None,
) -> BotVersion:
    """A bot version in the database, its files in the store (a real bot: random by default),
    set directly to ``status`` (no check runs), playing ``variants`` (default: every one)."""
    data = packed(folder or BOTS / "random")
    sha, size = store.put_bytes(data)
    bot, _ = Bot.objects.get_or_create(name=name, defaults={"owner": owner, "trusted": trusted})
    number = bot.versions.count() + 1
    return BotVersion.objects.create(
        bot=bot,
        number=number,
        status=status,
        sha256=sha,
        kind=BotVersion.Kind.TARGZ,
        filename=f"{name}.tar.gz",
        size=size,
        **({"variants": ",".join(variants)} if variants is not None else {}),
    )


def verified_address(user: Any, address: str) -> None:
    """Give ``user`` the e-mail address, verified (as following its link does): notifications
    go to verified addresses only."""
    from arena.notifications.models import NotificationSettings

    user.email = address
    user.save(update_fields=["email"])
    NotificationSettings.objects.update_or_create(user=user, defaults={"verified_email": address})


@pytest.fixture
def system_user(db: Any) -> Any:
    return bot_services.system_user()


@pytest.fixture
def anchor(system_user: Any) -> BotVersion:
    """The built-in random bot, active (the rating anchor)."""
    return make_version(system_user, "random", trusted=True)


@pytest.fixture
def worker_env() -> Iterator[dict[str, str]]:
    """Environment for a Celery worker (or any process) that must see this test's database,
    broker queue, bot store and cache; everything else it writes goes under :data:`VAR_DIR`."""
    from django.db import connection

    env = dict(os.environ)
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        env["DATABASE_URL"] = f"sqlite:///{db['NAME']}"
    else:
        host = db.get("HOST") or "127.0.0.1"
        port = db.get("PORT") or 5432
        password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
        env["DATABASE_URL"] = f"postgres://{db['USER']}{password}@{host}:{port}/{db['NAME']}"
    env["ARENA_VAR_DIR"] = str(VAR_DIR)
    env["ARENA_CELERY_QUEUE"] = QUEUE
    env["ARENA_CACHE_PREFIX"] = django_settings.CACHES["default"]["KEY_PREFIX"]
    env["ARENA_BOT_STORE"] = str(django_settings.BOT_STORE_DIR)
    env["ARENA_BOT_CACHE"] = str(Path(django_settings.BOT_CACHE_DIR).parent / "worker-cache")
    if not django_settings.REDIS_URL:
        env["ARENA_CELERY_BROKER_URL"] = BROKER_URL
    env["DJANGO_SETTINGS_MODULE"] = "arena.settings"
    env["PYTHONUNBUFFERED"] = "1"
    yield env


# ----------------------------------------------------------------------------- a real worker

#: Generous: the machine is shared with other work. Nothing here measures speed.
DEADLINE_S = 600


@contextlib.contextmanager
def celery_worker(
    env: dict[str, str], log: Path, queues: list[str], *, pool: str = "prefork"
) -> Iterator[Callable[[], str]]:
    """A real Celery worker process consuming ``queues``, started with ``env``, writing its
    log to ``log``; yields a function returning the end of its log (which fails the test
    when the worker exited). Stopped (TERM, then KILL of its process group) at the end."""
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "arena",
        "worker",
        "--queues",
        ",".join(queues),
        "--concurrency",
        "1",
        "--pool",
        pool,
        "--loglevel",
        "INFO",
        "--hostname",
        f"e2e-{uuid.uuid4().hex[:6]}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
            start_new_session=True,
        )

    def tail() -> str:
        if proc.poll() is not None:
            pytest.fail(f"the worker exited ({proc.returncode}):\n{log.read_text()[-6000:]}")
        return log.read_text(errors="replace")[-6000:]

    try:
        yield tail
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # any pool process left behind


@pytest.fixture
def worker(worker_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A real Celery worker on this test run's queues (the match queue and the periodic one,
    where the notifications' tasks go, as ``runarena``'s worker); yields a function returning
    its log."""
    with celery_worker(worker_env, tmp_path / "worker.log", [QUEUE, f"{QUEUE}.periodic"]) as tail:
        yield tail


def wait_for(what: str, done: Callable[[], bool], log: Callable[[], str]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        log()  # fails at once if the worker died
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; worker log:\n{log()}")
        time.sleep(0.5)


# ----------------------------------------------------------------------------- its own bots

_PR_SET_CHILD_SUBREAPER = 36


@contextlib.contextmanager
def adopting_orphans() -> Iterator[None]:
    """While the block runs, this process adopts the orphans of the processes it started
    (``PR_SET_CHILD_SUBREAPER``): the bots of a worker killed with SIGKILL stay among its
    descendants, where :func:`bots_started_here` finds them, instead of going to PID 1 with
    the bots of every other arena on the host. The adopted processes that ended meanwhile
    are reaped at the end."""
    libc = ctypes.CDLL(None, use_errno=True)
    before = _children()
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        pytest.fail(f"prctl(PR_SET_CHILD_SUBREAPER): {os.strerror(ctypes.get_errno())}")
    try:
        yield
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        for pid in _children() - before:
            if _zombie(pid):  # adopted, and ended (the block waited for its own children)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)


def _children() -> set[int]:
    me = os.getpid()
    return {pid for pid, entry in proc_table().items() if entry.ppid == me}


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].startswith(b"Z")


def bots_started_here() -> set[int]:
    """Live processes of the arena's slot uids (those of the workers tests start) among this
    process's descendants: the bots of the workers it started, not another arena's."""
    slots = SandboxSettings()
    uids = range(slots.first_uid, slots.first_uid + slots.slots)
    mine = descendants(proc_table(), os.getpid())
    return {pid for pid in mine if real_uid(pid) in uids}
