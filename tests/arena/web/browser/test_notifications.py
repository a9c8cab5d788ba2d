"""The notification settings page, and the failure warning on a bot's page, in a browser."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.notifications.models import NotificationSettings
from tests.arena.conftest import make_version, verified_address
from tests.arena.games.test_failures import crash
from tests.browser import assert_fits_the_screen


@pytest.mark.django_db(transaction=True)
def test_the_owner_edits_the_notification_settings(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    log_in(user)
    page.goto(f"{site}/")
    page.get_by_role("link", name="Notifications").click()
    page.get_by_label("Email address").fill("alice@example.org")
    page.get_by_label("a test of my bot finished").uncheck()
    page.get_by_label("a tournament I organised or played finished").uncheck()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Your notification settings were saved.")).to_be_visible()
    assert_fits_the_screen(page)
    prefs = NotificationSettings.objects.get(user=user)
    assert prefs.events == [
        "check_finished",
        "tournament_started",
        "schedule_skipped",
        "version_failing",
    ]
    assert prefs.email and not prefs.webhook
    assert page.get_by_label("a check of my bot finished").is_checked()
    assert not page.get_by_label("a test of my bot finished").is_checked()
    # No mail until the address is verified: the page says so, and so does a test.
    expect(page.locator("#email-status")).to_contain_text("Not verified")
    page.get_by_role("button", name="Send a test notification").click()
    expect(page.get_by_text("alice@example.org is not verified yet")).to_be_visible()
    verified_address(user, "alice@example.org")  # as following the mailed link does
    page.reload()
    expect(page.locator("#email-status")).to_contain_text("Verified.")
    page.get_by_role("button", name="Send a test notification").click()
    expect(page.get_by_text("A test notification is on its way (email)")).to_be_visible()
    expect(page.get_by_role("cell", name="Test notification")).to_be_visible()
    assert_fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_the_bot_page_warns_its_owner_of_a_failing_version(
    page: Any, site: str, user: Any, other_user: Any, log_in: Any, settings: Any
) -> None:
    settings.FAILING_MIN_GAMES = 3
    mine = make_version(user, "crasher")
    other = make_version(other_user, "steady")
    for _ in range(3):
        crash(mine, other)
    page.goto(f"{site}/bots/crasher/")
    expect(page.get_by_text("Failing often")).to_have_count(0)
    log_in(user)
    page.goto(f"{site}/bots/crasher/")
    warning = page.get_by_role("alert")
    expect(warning).to_contain_text("v1 lost 3 of its 3 Yangsh games")
    expect(page.get_by_text("exited during the game (exit code 1)")).to_be_visible()
    assert_fits_the_screen(page)
