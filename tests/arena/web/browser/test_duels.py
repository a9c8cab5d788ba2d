"""Starting a test from the bot page and following it, at desktop and phone width."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.bots.models import BotVersion
from arena.duels.models import Duel
from tests.arena.conftest import make_version
from tests.browser import assert_fits_the_screen, contrast


@pytest.mark.django_db(transaction=True)
def test_an_owner_starts_a_test_from_the_bot_page_and_sees_it_live(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    make_version(user, "walker", status=BotVersion.Status.RETIRED)
    make_version(user, "walker")
    log_in(user)
    page.goto(f"{site}/bots/walker/")
    page.get_by_role("link", name="Test against…").click()
    page.wait_for_url("**/bots/walker/test/")
    assert_fits_the_screen(page)
    page.get_by_label("Opponent").select_option(
        label="walker v1 (alice, retired; plays every variant)"
    )
    page.get_by_label("elo1").fill("50")
    page.get_by_role("button", name="Start the test").click()
    page.wait_for_url("**/tests/*/")
    duel = Duel.objects.get()
    assert page.url.endswith(f"/tests/{duel.pk}/")
    expect(page.get_by_role("heading", name=f"Test #{duel.pk}")).to_be_visible()
    expect(page.get_by_text("walker v2 against walker v1")).to_be_visible()
    expect(page.locator("#llr")).to_contain_text("0.00 in (-2.94, 2.94)")
    expect(page.get_by_role("button", name="Cancel")).to_be_visible()
    assert contrast(page.get_by_role("button", name="Cancel")) >= 4.5  # white on red
    assert_fits_the_screen(page)
    assert duel.elo1 == 50 and duel.candidate.number == 2


@pytest.mark.django_db(transaction=True)
def test_a_visitor_challenges_a_bot_from_its_page(
    page: Any, site: str, user: Any, other_user: Any, log_in: Any
) -> None:
    make_version(user, "walker")
    make_version(other_user, "runner")
    log_in(other_user)
    page.goto(f"{site}/bots/walker/")
    page.get_by_role("link", name="Challenge", exact=True).click()
    page.wait_for_url("**/bots/walker/challenge/")
    assert_fits_the_screen(page)
    page.get_by_role("button", name="Start the challenge").click()
    page.wait_for_url("**/challenges/*/")
    expect(page.get_by_text("runner v1 against walker v1")).to_be_visible()
    assert_fits_the_screen(page)
    page.goto(f"{site}/challenges/")
    assert_fits_the_screen(page)
