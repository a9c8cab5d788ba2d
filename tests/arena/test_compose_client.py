"""The API client that ``./dev vm-test --compose`` runs in the VM (vm/guest/compose_client.py),
run here against a live server and a real worker: what it expects of the API is what the API
does, so that a VM run of half an hour does not fail on its last step."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from arena.bots import services as bots
from arena.ratings import services as ratings
from tests.arena.conftest import BOTS

ROOT = Path(__file__).resolve().parents[2]


def load_client() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "compose_client", ROOT / "vm" / "guest" / "compose_client.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_vm_clients_upload_check_rating_and_download_pass_against_the_api(
    live_server: Any,
    worker: Callable[[], str],
    django_user_model: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bots.register_builtin_bots(names=["random"])  # the anchor its qualification games meet
    django_user_model.objects.create_superuser("vm-author", "vm@example.org", "a-long-password-3")
    client = load_client()
    client.POLL_S = 1
    waited = client.wait

    def wait(what: str, seconds: float, probe: Callable[[], Any]) -> Any:
        def after_a_fit() -> Any:
            ratings.refresh_all()  # what the scheduler does every RATING_INTERVAL_S
            return probe()

        return waited(what, seconds, after_a_fit)

    client.wait = wait
    password, folder = "a-long-password-3", str(BOTS / "random")
    try:
        status = client.main(live_server.url, "vm-author", password, folder)
    except SystemExit as e:
        pytest.fail(f"{e}\n{capsys.readouterr().out}\n{worker()}")
    assert status == 0
    out = capsys.readouterr().out
    assert "compose: checked and active" in out
    assert "compose:   built-in random v1: active" in out
    assert "compose:   built-in greedy: the API answered 404" in out  # not registered here
    assert "compose: rated in yinsh" in out
    assert "compose: downloaded the record of match" in out
    assert "[White " in out or "[Black " in out
