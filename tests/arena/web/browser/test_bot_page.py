"""A bot's page as visitors and its owner see it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.arena.conftest import make_version


@pytest.mark.django_db(transaction=True)
def test_a_visitor_sees_a_bots_versions(page: Any, site: str, user: Any) -> None:
    make_version(user, "walker")
    page.goto(f"{site}/bots/walker/")
    expect(page.get_by_role("link", name="Upload a new version")).to_have_count(0)
    expect(page.get_by_role("heading", name="walker").first).to_be_visible()
    expect(page.locator("#v1")).to_have_count(1)


@pytest.mark.django_db(transaction=True)
def test_the_owner_sees_the_upload_form_on_its_bot(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    make_version(user, "walker")
    log_in(user)
    page.goto(f"{site}/bots/walker/")
    expect(page.get_by_role("link", name="Upload a new version")).to_be_visible()
