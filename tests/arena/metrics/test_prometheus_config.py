"""The compose file's Prometheus (deploy/prometheus/): its configuration and alert rules pass
promtool's checks, the alerts name only metrics the site exports, and docs/deployment.md
describes every metric."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.conftest import skip_unless_required

ROOT = Path(__file__).resolve().parents[3]
DEPLOY = ROOT / "deploy" / "prometheus"

INSTALL_HINT = (
    "promtool is missing: on Debian or Ubuntu run `apt-get install -y prometheus`; "
    "./dev test installs it when it runs as root"
)


def promtool(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    if tool is None:
        skip_unless_required(INSTALL_HINT)
    assert tool is not None
    return subprocess.run(
        [tool, *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=120
    )


def test_the_alert_rules_pass_promtool() -> None:
    run = promtool("check", "rules", "alerts.yml", cwd=DEPLOY)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_configuration_passes_promtool(tmp_path: Path) -> None:
    """As compose mounts it, with the token file it names written where it says."""
    config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    (job,) = config["scrape_configs"]
    assert job["metrics_path"] == "/metrics"
    assert job["authorization"]["type"] == "Bearer"
    assert job["static_configs"] == [{"targets": ["web:8000"]}]
    token = tmp_path / "token"
    token.write_text("a-token")
    job["authorization"]["credentials_file"] = str(token)
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
    shutil.copy(DEPLOY / "alerts.yml", tmp_path / "alerts.yml")
    run = promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.django_db
def test_the_alerts_name_only_exported_metrics(families: Callable[[], set[str]]) -> None:
    exported = families()
    rules = yaml.safe_load((DEPLOY / "alerts.yml").read_text())
    named = {
        re.sub(r"_(bucket|sum|count|total)$", "", name)
        for group in rules["groups"]
        for rule in group["rules"]
        for name in re.findall(r"\barena_[a-z_]+", rule["expr"])
    }
    assert named, "the alerts name no metric"
    assert named <= exported, named - exported


@pytest.mark.django_db
def test_the_deployment_guide_describes_every_metric(families: Callable[[], set[str]]) -> None:
    guide = (ROOT / "docs" / "deployment.md").read_text()
    missing = {name for name in families() if f"`{name}" not in guide}
    assert not missing, missing
    for alert in yaml.safe_load((DEPLOY / "alerts.yml").read_text())["groups"][0]["rules"]:
        assert alert["alert"] in guide, alert["alert"]
