"""A real Prometheus (Debian's ``prometheus``, as ``./dev test`` installs it) scrapes the
test's own site with the token, as the compose file's does, and holds the arena's metrics."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.jobs import workers
from tests.arena.conftest import wait_for
from tests.arena.metrics.conftest import TOKEN
from tests.conftest import skip_unless_required

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def prometheus(live_server: Any, tmp_path: Path, metrics_token: str) -> Iterator[str]:
    """Prometheus with deploy/prometheus's configuration, scraping the live test server every
    second; yields its address."""
    binary = shutil.which("prometheus")
    if binary is None:
        skip_unless_required("prometheus is missing: `apt-get install -y prometheus`")
    assert binary is not None
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    config["global"] = {"scrape_interval": "1s", "scrape_timeout": "1s"}
    config.pop("rule_files")
    (job,) = config["scrape_configs"]
    (tmp_path / "token").write_text(TOKEN)
    job["authorization"]["credentials_file"] = str(tmp_path / "token")
    job["static_configs"] = [{"targets": [live_server.url.removeprefix("http://")]}]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    address = f"127.0.0.1:{free_port()}"
    log = tmp_path / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address={address}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        yield f"http://{address}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def query(prometheus: str, expr: str) -> list[Any]:
    """The instant query's result (empty while Prometheus starts, or before a scrape)."""
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return list(json.load(answer)["data"]["result"])
    except OSError:
        return []


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_prometheus_scrapes_the_metrics_with_the_token(prometheus: str) -> None:
    from django.utils import timezone

    workers.beat("scraped@host", timezone.now(), 3)
    expr = 'arena_worker_concurrency{worker="scraped@host", job="arena"}'
    wait_for("Prometheus to scrape the site", lambda: bool(query(prometheus, expr)), lambda: "")
    (found,) = query(prometheus, expr)
    assert found["value"][1] == "3"
    assert query(prometheus, 'up{job="arena"}')[0]["value"][1] == "1"
