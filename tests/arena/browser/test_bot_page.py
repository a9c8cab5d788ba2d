"""A bot's page as visitors and its owner see it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.arena.conftest import make_version


@pytest.mark.django_db(transaction=True)
def test_a_visitor_sees_a_bots_versions(page: Any, site: str, user: Any) -> None:
    make_version(user, "walker")
    page.goto(f"{site}/bots/walker/")
    assert page.get_by_role("link", name="Upload a new version").count() == 0
    assert page.get_by_role("heading", name="walker").first.is_visible()
    assert page.locator("#v1").count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_owner_sees_the_upload_form_on_its_bot(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    make_version(user, "walker")
    log_in(user)
    page.goto(f"{site}/bots/walker/")
    assert page.get_by_role("link", name="Upload a new version").is_visible()
