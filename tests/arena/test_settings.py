"""The settings' defaults: safe where the arena runs in production, debug only where a
developer asks for it (``./dev start``), and ``manage.py check --deploy`` clean for the
production settings docs/deployment.md documents. Each case is a fresh process, since the
settings are read once, from the environment."""

from __future__ import annotations

import json
import os
import secrets
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.env import machine_secret_key

ROOT = Path(__file__).resolve().parents[2]
SHOWN = (
    "DEBUG",
    "HTTPS",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
)


def clean_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """This process's environment without the arena's own settings, plus ``env``."""
    base = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ARENA_", "DJANGO_"))  # the tests' own (async-unsafe, say)
        and k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")
    }
    return {**base, "ARENA_VAR_DIR": str(tmp_path / "var"), **env}


def settings_in(env: dict[str, str]) -> dict[str, object]:
    code = (
        "import json, django; from django.conf import settings; django.setup(); "
        f"print(json.dumps({{k: getattr(settings, k) for k in {SHOWN!r}}}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "arena.settings"},
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(out.stdout))


def test_debug_is_off_unless_asked_for(tmp_path: Path) -> None:
    assert settings_in(clean_env(tmp_path))["DEBUG"] is False
    assert settings_in(clean_env(tmp_path, ARENA_DEBUG="1"))["DEBUG"] is True


def test_dev_start_asks_for_debug_and_the_tests_for_plain_http() -> None:
    dev = (ROOT / "dev").read_text()
    start = dev[dev.index("    start)") : dev.index("    test)")]
    assert "export ARENA_DEBUG=${ARENA_DEBUG:-1}" in start
    test = dev[dev.index("    test)") : dev.index("    vm-test)")]
    assert "export ARENA_HTTPS=${ARENA_HTTPS:-0}" in test


def test_the_embedded_defaults_serve_plain_http_on_the_loopback(tmp_path: Path) -> None:
    s = settings_in(clean_env(tmp_path))
    assert s["HTTPS"] is False and s["SESSION_COOKIE_SECURE"] is False
    assert s["SECURE_SSL_REDIRECT"] is False and s["SECURE_HSTS_SECONDS"] == 0


def test_a_site_on_a_database_server_insists_on_https(tmp_path: Path) -> None:
    env = clean_env(tmp_path, DATABASE_URL="postgres://arena@db.invalid:5432/arena")
    assert settings_in(env) == {
        "DEBUG": False,
        "HTTPS": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 365 * 24 * 3600,
    }
    # Unless the operator serves it over plain HTTP on purpose.
    assert settings_in({**env, "ARENA_HTTPS": "0"})["SESSION_COOKIE_SECURE"] is False


def test_check_deploy_is_clean_with_the_documented_production_settings(tmp_path: Path) -> None:
    env = clean_env(
        tmp_path,
        DATABASE_URL="postgres://arena@db.invalid:5432/arena",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="arena.example.org",
        CSRF_TRUSTED_ORIGINS="https://arena.example.org",
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    # Without the shared key, it warns that each machine would sign with its own.
    del env["SECRET_KEY"]
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0 and "arena.W001" in out.stderr, out.stdout + out.stderr


def test_the_machines_secret_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    path = tmp_path / "var" / "secret-key"
    key = machine_secret_key(path)
    assert len(key) >= 50 and machine_secret_key(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["secret-key"]  # no draft left


def test_processes_making_the_key_at_once_agree_on_one(tmp_path: Path) -> None:
    path = tmp_path / "secret-key"
    keys: list[str] = []
    start = threading.Barrier(8)

    def make() -> None:
        start.wait()
        keys.append(machine_secret_key(path))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(keys) == 8 and len(set(keys)) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["secret-key"]


def test_a_damaged_key_file_is_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "secret-key"
    path.write_text("short\n")
    with pytest.raises(ValueError, match="delete it to make a new one"):
        machine_secret_key(path)


def test_a_transaction_pooler_turns_off_server_side_cursors(tmp_path: Path) -> None:
    """PgBouncer in transaction mode may hand a cursor's next fetch to another server
    connection; Django then runs ``iterator()`` with client-side cursors."""
    code = (
        "import django; from django.conf import settings; django.setup(); "
        "print(settings.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS'])"
    )

    def cursors_off(**env: str) -> str:
        run = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**clean_env(tmp_path, **env), "DJANGO_SETTINGS_MODULE": "arena.settings"},
            capture_output=True,
            text=True,
            check=True,
        )
        return run.stdout.strip()

    url = "postgres://arena@db.invalid:5432/arena"
    assert cursors_off(DATABASE_URL=url) == "False"
    assert cursors_off(DATABASE_URL=url, ARENA_DB_TRANSACTION_POOLER="1") == "True"
