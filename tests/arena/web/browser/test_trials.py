"""A trial in the browser: the owner uploads a bot on "Try a bot", the page waits for it and
shows the game on the board with the bot's log once a worker played it, and the owner publishes
it; at desktop and phone width."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from arena.admission import trials
from arena.admission.models import Trial
from arena.bots import services as bot_services
from arena.bots.models import Bot
from tests.arena.conftest import TEST_BOTS, make_version, packed
from tests.browser import assert_fits_the_screen

DIARY = "DIARY-MARKER-5e2b"


@pytest.mark.django_db(transaction=True)
def test_a_trial_is_tried_watched_and_published(
    page: Any, site: str, user: Any, log_in: Any, tmp_path: Path
) -> None:
    make_version(bot_services.system_user(), "random", trusted=True)
    archive = tmp_path / "diary.tar.gz"
    archive.write_bytes(packed(TEST_BOTS / "honest" / "diary"))
    log_in(user)
    page.goto(f"{site}/accounts/bots/")
    page.get_by_role("link", name="Try a bot").click()
    page.wait_for_url(f"{site}/trials/")
    assert_fits_the_screen(page)
    page.get_by_label("File").set_input_files(str(archive))
    page.get_by_label("Colour").select_option("black")
    page.get_by_role("button", name="Try it").click()
    trial = Trial.objects.get()
    page.wait_for_url(f"{site}/trials/{trial.pk}/")
    expect(page.get_by_text("It is waiting for a worker")).to_be_visible()
    # A worker plays it; the waiting page shows the game by itself, in the same document.
    page.evaluate("window.__marker = 'still here'")
    assert trials.run(trial.pk) == "played"
    expect(page.locator(".yinsh-replay svg").first).to_be_visible()
    expect(page.locator(".trial-result")).to_contain_text("as black")
    expect(page.locator("#log-black")).to_contain_text(DIARY)
    assert page.evaluate("window.__marker") == "still here"
    # The game's analysis board comes with it, though its part of the page arrived later.
    expect(page.get_by_role("button", name="Analyse")).to_be_visible()
    assert_fits_the_screen(page)
    page.get_by_label("Bot name").fill("diarist")
    page.get_by_role("button", name="Publish as a new bot").click()
    page.wait_for_url(f"{site}/bots/diarist/")
    assert Bot.objects.get(name="diarist").versions.get().sha256 == trial.sha256
