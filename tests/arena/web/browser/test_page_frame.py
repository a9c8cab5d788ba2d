"""What every page has around its content, at desktop and phone width: a skip link, a header
that stays short on a phone, tables that say they scroll, and the match filters' address."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.arena.conftest import make_version


def test_the_first_tab_reaches_a_skip_link_to_the_content(page: Page, site: str) -> None:
    page.goto(f"{site}/bots/")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).not_to_be_in_viewport()
    page.keyboard.press("Tab")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    skip.press("Enter")
    expect(page.locator("main#content")).to_be_focused()


@pytest.mark.django_db(transaction=True)
def test_the_header_takes_at_most_two_lines_on_a_phone(
    page: Page, site: str, screen: str, user: Any, log_in: Any
) -> None:
    log_in(user)
    page.goto(f"{site}/")
    line = float(page.evaluate("parseFloat(getComputedStyle(document.body).lineHeight)"))
    height = page.locator("header.top").bounding_box()
    assert height is not None
    if screen == "phone":
        assert height["height"] <= 2.9 * line, f"{height['height']} px for {line} px lines"
    expect(
        page.get_by_role("navigation", name="Site").get_by_role("link", name="API")
    ).to_be_attached()
    expect(
        page.get_by_role("navigation", name="Account").get_by_role("link", name="My bots")
    ).to_be_attached()


def test_a_wide_table_scrolls_in_a_labelled_region_that_the_keyboard_reaches(
    page: Page, site: str, screen: str
) -> None:
    heads = "".join(f"<th>column {k}</th>" for k in range(24))
    cells = "".join(f"<td>value-{k}-of-a-wide-table</td>" for k in range(24))
    body = (
        '<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="stylesheet" href="/static/arena/site.css">'
        f'<main><h1>Wide</h1><div class="scroll"><table><thead><tr>{heads}</tr></thead>'
        f"<tbody><tr>{cells}</tr></tbody></table></div></main>"
        '<script src="/static/arena/site.js"></script>'
    )
    page.route(
        f"{site}/wide.html", lambda route: route.fulfill(body=body, content_type="text/html")
    )
    page.goto(f"{site}/wide.html")
    region = page.get_by_role(
        "region", name="Table: column 0, column 1, column 2, column 3, scrolls sideways"
    )
    expect(region).to_have_attribute("tabindex", "0")
    expect(region).to_have_class("scroll scrolls")
    assert region.evaluate("(e) => e.scrollWidth > e.clientWidth")
    region.focus()
    page.keyboard.press("ArrowRight")
    expect(region).not_to_have_js_property("scrollLeft", 0)
    assert "linear-gradient" in region.evaluate("(e) => getComputedStyle(e).backgroundImage")


@pytest.mark.django_db(transaction=True)
def test_the_match_filters_put_only_what_was_chosen_in_the_address(
    page: Page, site: str, user: Any
) -> None:
    make_version(user, "walker")
    page.goto(f"{site}/matches/")
    page.get_by_label("kind").select_option("ladder")
    page.get_by_label("bot").fill("walker")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(f"{site}/matches/?kind=ladder&bot=walker")
    expect(page.get_by_label("bot")).to_have_value("walker")
    page.go_back()
    expect(page.locator("#id_variant")).to_be_enabled()
