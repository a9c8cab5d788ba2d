"""The site's own error pages as people see them, on a desktop screen and a phone's: the
site's header, what happened in words, a way on, and nothing wider than the screen."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import assert_fits_the_screen


@pytest.mark.django_db(transaction=True)
def test_a_missing_page_is_the_sites_own_and_fits_the_screen(
    page: Any, site: str, page_errors: list[str]
) -> None:
    response = page.goto(f"{site}/bots/no-such-bot-with-a-rather-long-name-for-a-phone/")
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_role("link", name="YINSH bot arena")).to_be_visible()
    expect(page.get_by_role("link", name="home page")).to_be_visible()
    assert_fits_the_screen(page)
    # The 404 itself (its answer, and Chromium's console line about it) was this test's point.
    assert page_errors and all("404" in e for e in page_errors), page_errors
    page_errors.clear()
