"""Remote bots on the site: registered from the upload page, connected with the client the
site offers, given a new version with a button."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.bots import services as bots
from arena.bots.models import BotVersion
from tests.browser import assert_fits_the_screen


@pytest.mark.django_db(transaction=True)
def test_a_bot_that_runs_on_its_owners_machine_is_registered_and_connected(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    log_in(user)
    page.goto(f"{site}/upload/")
    page.get_by_role("link", name="register a bot that runs on your own machine").click()
    expect(page.get_by_role("heading", name="A bot that runs on your own machine")).to_be_visible()
    assert_fits_the_screen(page)
    page.get_by_label("Name").fill("far-away")
    page.get_by_label("Blitz YINSH").check()
    page.get_by_role("button", name="Register").click()
    expect(page.get_by_role("heading", name="Connect it")).to_be_visible()
    expect(page.locator(".remote-connect pre")).to_contain_text("--bot far-away")
    expect(page.get_by_role("link", name="Upload a new version")).to_have_count(0)
    assert_fits_the_screen(page)
    assert BotVersion.objects.get(bot__name="far-away").variants == "blitz"
    # The client the page offers is the reference client itself.
    link = page.locator(".remote-connect").get_by_role("link", name="client.py")
    response = page.request.get(site + link.get_attribute("href"))
    assert response.ok and b"def main(" in response.body()
    # A new version, when its owner says so: active at once.
    page.get_by_role("button", name="Start a new version").click()
    expect(page.locator("#v2")).to_contain_text("active")
    expect(page.locator("#v1")).to_contain_text("retired")
    assert_fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_a_visitor_is_not_shown_how_to_connect_someone_elses_remote_bot(
    page: Any, site: str, user: Any
) -> None:
    bots.create_remote_bot(user, "far-away")
    page.goto(f"{site}/bots/far-away/")
    expect(page.locator("#v1")).to_contain_text("runs on its owner's machine")
    expect(page.get_by_role("heading", name="Connect it")).to_have_count(0)
    expect(page.get_by_role("button", name="Start a new version")).to_have_count(0)
    assert_fits_the_screen(page)
