"""The inbox in a browser, at desktop and phone width: the header's unread count, opening a
notification, marking the rest read."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.notifications import services
from arena.notifications.models import Event
from tests.arena.conftest import make_version
from tests.browser import assert_fits_the_screen


@pytest.mark.django_db(transaction=True)
def test_a_user_without_email_reads_their_notifications_in_the_inbox(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    make_version(user, "walker")
    services.notify(
        user, Event.CHECK_FINISHED, "walker v1 passed its check", "It is active.", "/bots/walker/"
    )
    for k in range(2):
        services.notify(user, Event.VERSION_FAILING, f"walker v1 fails often ({k})", "It crashed.")
    log_in(user)
    page.goto(f"{site}/")
    inbox = page.get_by_role("link", name="Inbox, 3 unread")
    expect(inbox).to_be_visible()
    assert_fits_the_screen(page)
    inbox.click()
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    expect(page.locator("tr.unread")).to_have_count(3)
    assert_fits_the_screen(page)
    page.get_by_role("button", name="walker v1 passed its check").click()
    expect(page).to_have_url(f"{site}/bots/walker/")
    expect(page.get_by_role("link", name="Inbox, 2 unread")).to_be_visible()
    page.goto(f"{site}/accounts/inbox/")
    expect(page.locator("tr.unread")).to_have_count(2)
    page.get_by_role("button", name="Mark all read").click()
    expect(page.get_by_text("2 notifications marked read.")).to_be_visible()
    expect(page.locator("tr.unread")).to_have_count(0)
    expect(page.locator("#inbox-link")).to_have_text("Inbox")
    assert services.unread_count(user) == 0
