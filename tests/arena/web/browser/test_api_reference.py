"""The footer's API link opens a page to read, not a file to save."""

from __future__ import annotations

from typing import Any

import pytest


@pytest.mark.django_db(transaction=True)
def test_the_footers_api_link_opens_the_reference_as_a_page(page: Any, site: str) -> None:
    page.goto(f"{site}/")
    href = page.locator("footer").get_by_role("link", name="API reference").get_attribute("href")
    page.goto(f"{site}{href}")  # a page to read: it opens, nothing is saved
    page.get_by_text("YINSH bot arena API").first.wait_for()
    assert page.get_by_text("/api/bots/", exact=True).first.is_visible()
    raw = page.request.get(f"{site}/api/schema/")
    assert raw.ok and raw.text().startswith("openapi:")
