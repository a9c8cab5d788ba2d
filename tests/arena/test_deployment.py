"""docker-compose.yml and the Dockerfile, checked by reading them (no Docker needed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ARENA_SERVICES = ("migrate", "web", "worker", "remote-worker", "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def command(service: dict[str, Any]) -> str:
    cmd = service["command"]
    return " ".join(cmd) if isinstance(cmd, list) else cmd


def test_every_service_is_there(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"postgres", "redis", "prometheus", *ARENA_SERVICES}
    # Prometheus only with its profile: docker compose --profile metrics up.
    assert compose["services"]["prometheus"]["profiles"] == ["metrics"]
    for name in ("postgres", "redis", *ARENA_SERVICES):
        assert "profiles" not in compose["services"][name], name


def test_the_arena_services_share_the_settings_and_no_folder(compose: dict[str, Any]) -> None:
    for name in ARENA_SERVICES:
        s = compose["services"][name]
        env = s["environment"]
        assert (
            env["DATABASE_URL"].startswith("postgres://")
            and "@postgres:5432/" in env["DATABASE_URL"]
        )
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert "SECRET_KEY" in env and env["ARENA_DEBUG"] == "0"
        # Served over HTTPS unless the operator says otherwise (trying it on a laptop).
        assert env["ARENA_HTTPS"] == "${ARENA_HTTPS:-1}", name
        # The bot store is the database (the default): nothing shared but it and the broker.
        assert "ARENA_BOT_STORAGE" not in env and "ARENA_BOT_STORE" not in env, name
        assert not any("bot-store" in v for v in s.get("volumes", [])), name
    assert "postgres-data" in compose["volumes"] and "bot-store" not in compose["volumes"]
    assert "postgres-data:/var/lib/postgresql/data" in compose["services"]["postgres"]["volumes"]


def test_the_commands(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert command(services["web"]).startswith(
        "gunicorn arena.wsgi --config python:arena.metrics.gunicorn --preload"
    )
    assert command(services["worker"]).startswith("celery -A arena worker")
    # Threads: remote bots' long polls hold one each, never the only worker of the pages.
    web = command(services["web"]).split()
    assert int(web[web.index("--threads") + 1]) >= 8
    # The scheduler runs the periodic tasks in a worker of its own, on their own queue.
    assert command(services["beat"]).startswith("celery -A arena worker --beat")
    assert "migrate" in command(services["migrate"])
    assert "register_builtin_bots" in command(services["migrate"])


def _threads(argv: list[str]) -> int:
    """How many requests one gunicorn process of ``argv`` serves at once: its threads, when its
    workers are threaded (a sync worker serves one)."""
    if argv[argv.index("--worker-class") + 1] != "gthread":
        return 1
    return int(argv[argv.index("--threads") + 1])


def test_the_web_server_serves_event_streams_with_threads(compose: dict[str, Any]) -> None:
    """A page's event stream holds what serves it for up to a minute: a sync worker would serve
    nobody else meanwhile. Both the compose file's server and the image's run threaded ones."""
    web = compose["services"]["web"]["command"]
    text = (ROOT / "Dockerfile").read_text()
    image = json.loads(next(x for x in text.splitlines() if x.startswith("CMD "))[4:])
    for argv in (web, image):
        assert argv[0] == "gunicorn", argv
        assert _threads(argv) >= 8, argv
        assert int(argv[argv.index("--workers") + 1]) * _threads(argv) >= 24, argv


def test_the_metrics_token_reaches_the_site_and_prometheus(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in (*ARENA_SERVICES, "prometheus"):
        assert services[name]["environment"]["ARENA_METRICS_TOKEN"] == "${ARENA_METRICS_TOKEN:-}"
    assert "web" in services["web"]["environment"]["ALLOWED_HOSTS"]
    assert services["web"]["environment"]["PROMETHEUS_MULTIPROC_DIR"]
    assert "./deploy/prometheus:/etc/prometheus:ro" in services["prometheus"]["volumes"]


def test_the_web_servers_options_can_be_added_to(compose: dict[str, Any]) -> None:
    # gunicorn reads GUNICORN_CMD_ARGS: a slow host needs a longer worker timeout (the API's
    # token request hashes a password, which took over gunicorn's 30 s under emulation).
    env = compose["services"]["web"]["environment"]
    assert env["GUNICORN_CMD_ARGS"] == "${GUNICORN_CMD_ARGS:-}"


def test_migrate_runs_first_and_the_databases_are_healthy(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["migrate"]["restart"] == "no"
    for name in ("web", "worker", "beat"):
        deps = services[name]["depends_on"]
        assert deps["migrate"]["condition"] == "service_completed_successfully", name
        assert deps["redis"]["condition"] == "service_healthy", name
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("postgres", "redis", "web", "worker"):
        assert services[name]["healthcheck"]["test"], name


def test_the_worker_can_run_the_sandbox_and_scale(compose: dict[str, Any]) -> None:
    worker = compose["services"]["worker"]
    assert worker["init"] is True
    assert "seccomp=unconfined" in worker["security_opt"]
    assert "apparmor=unconfined" in worker["security_opt"]
    assert "SYS_ADMIN" in worker["cap_add"]
    assert any(v.startswith("/sys/fs/cgroup:") for v in worker["volumes"])
    # Scalable: no fixed container name or published port.
    assert "container_name" not in worker and "ports" not in worker


def test_the_games_of_remote_bots_have_a_worker_in_threads_on_their_queue(
    compose: dict[str, Any],
) -> None:
    from django.conf import settings

    remote = compose["services"]["remote-worker"]
    argv = command(remote).split()
    assert argv[:4] == ["celery", "-A", "arena", "worker"]
    assert argv[argv.index("--queues") + 1] == "arena.remote"  # REMOTE_QUEUE by default
    assert argv[argv.index("--pool") + 1] == "threads"
    assert settings.REMOTE_QUEUE.endswith(".remote")
    # It launches the sandboxed opponents: the match workers' privileges and database role.
    worker = compose["services"]["worker"]
    for key in ("cap_add", "security_opt", "cgroup", "volumes", "init"):
        assert remote[key] == worker[key], key
    assert remote["environment"]["DATABASE_URL"] == worker["environment"]["DATABASE_URL"]
    assert remote["environment"]["SECRET_KEY"] == ""


def test_beat_runs_exactly_once(compose: dict[str, Any]) -> None:
    beat = compose["services"]["beat"]
    assert beat["deploy"]["replicas"] == 1 and "container_name" not in beat
    worker = command(compose["services"]["worker"]).split()
    assert "-B" not in worker and "--beat" not in worker


def test_periodic_work_has_its_own_queue_consumed_first(compose: dict[str, Any]) -> None:
    from django.conf import settings

    queue = "arena.periodic"  # PERIODIC_QUEUE with the default ARENA_CELERY_QUEUE
    beat = command(compose["services"]["beat"]).split()
    assert beat[beat.index("--queues") + 1] == queue  # the scheduler's worker: only these
    worker = command(compose["services"]["worker"]).split()
    assert worker[worker.index("--queues") + 1].split(",") == ["arena"]  # matches only
    assert settings.PERIODIC_QUEUE.endswith(".periodic")
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["options"]["queue"] == settings.PERIODIC_QUEUE


def test_the_worker_connects_as_its_own_role_without_the_secret_key(
    compose: dict[str, Any],
) -> None:
    services = compose["services"]
    migrate = command(services["migrate"])
    assert "manage.py migrate" in migrate
    assert "manage.py worker_role arena_worker --password-env WORKER_DB_PASSWORD" in migrate
    assert migrate.index("worker_role") > migrate.index("manage.py migrate")
    assert "WORKER_DB_PASSWORD:?" in services["migrate"]["environment"]["WORKER_DB_PASSWORD"]
    env = services["worker"]["environment"]
    assert env["DATABASE_URL"].startswith("postgres://arena_worker:${WORKER_DB_PASSWORD:?")
    assert env["SECRET_KEY"] == ""
    for trusted in ("web", "beat"):
        assert services[trusted]["environment"]["DATABASE_URL"].startswith("postgres://arena:")
        assert services[trusted]["environment"]["SECRET_KEY"].startswith("${SECRET_KEY:?")


def test_redis_keeps_an_append_only_file(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert "--appendonly" in redis["command"]
    assert redis["command"][redis["command"].index("--appendonly") + 1] == "yes"
    assert any(v.endswith(":/data") for v in redis["volumes"])


def test_the_image_installs_bubblewrap_and_the_project() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert "bubblewrap" in text
    # Code, templates, static files and bots/ from /app; the extras the build asks for
    # (--build-arg PIP_EXTRAS=s3), none by default.
    line = next(x for x in text.splitlines() if "pip install -e" in x)
    command = line.split("pip install -e ", 1)[1].split(" &&")[0].rstrip(" \\")
    for extras, target in (("", "."), ("s3", ".[s3]")):
        shell = subprocess.run(
            ["sh", "-c", f"echo {command}"],
            env={"PIP_EXTRAS": extras},
            capture_output=True,
            text=True,
            check=True,
        )
        assert shell.stdout.strip() == target, (line, extras)
    assert "COPY bots" in text and "COPY engine" in text and "COPY arena" in text
    assert "COPY docs" in text  # the guide's pages are rendered from docs/
    assert "collectstatic" in text
    assert "compileall -q engine bots/sdk" in text  # bots import them read-only


def test_images_can_come_from_a_local_registry_or_build(compose: dict[str, Any]) -> None:
    # Hosts without access to Docker Hub build or mirror their own, keeping the public defaults.
    text = (ROOT / "Dockerfile").read_text()
    assert "ARG BASE_IMAGE=python:3.11-slim-bookworm\nFROM ${BASE_IMAGE}" in text
    services = compose["services"]
    assert services["postgres"]["image"] == "${POSTGRES_IMAGE:-postgres:16}"
    assert services["redis"]["image"] == "${REDIS_IMAGE:-redis:7}"


def test_loading_the_wsgi_application_imports_every_view() -> None:
    """What gunicorn --preload loads before it forks: the views too, so that no worker's first
    request pays for importing them (under a slow host, past gunicorn's worker timeout)."""
    probe = "import sys, arena.wsgi; print('arena.api.urls' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env=dict(os.environ, DJANGO_SETTINGS_MODULE="arena.settings"),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert out.stdout.strip() == "True", out.stderr


def _default(value: str) -> int:
    """A number in the compose file, or the default of the variable that stands for it
    (``${NAME:-32}``)."""
    match = re.fullmatch(r"\$\{\w+:-(\d+)\}|(\d+)", value)
    assert match, value
    return int(match[1] or match[2])


def test_postgresql_takes_every_connection_the_services_hold_at_once(
    compose: dict[str, Any],
) -> None:
    """Each thread of the web server and of the remote worker may hold a connection (a stream
    or a waiting game for its whole life), each pool process of a match worker two (its own and
    its sidecar's) and each main process one: PostgreSQL's limit must take them all at their
    defaults, with room (20) for migrations and an operator's shell."""
    services = compose["services"]
    web = services["web"]["command"]
    held = int(web[web.index("--workers") + 1]) * _threads(web)
    for name in ("worker", "remote-worker", "beat"):
        argv = command(services[name]).split()
        threads = argv[argv.index("--concurrency") + 1]
        pool = argv[argv.index("--pool") + 1] if "--pool" in argv else "prefork"
        n = _default(threads)
        held += 1 + (n if pool == "threads" else 2 * n)
    postgres = command(services["postgres"]).split()
    limit = next(a for a in postgres if a.startswith("max_connections="))
    assert _default(limit.split("=", 1)[1]) >= held + 20, held
