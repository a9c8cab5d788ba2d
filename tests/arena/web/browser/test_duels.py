"""Starting a test from the bot page and following it, at desktop and phone width."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.bots.models import BotVersion
from arena.duels.models import Duel
from tests.arena.conftest import make_version
from tests.arena.duels.test_duels import play_pair
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
    expect(page.get_by_role("heading", name="Test #1")).to_be_visible()
    expect(page.get_by_text("walker v2 against walker v1")).to_be_visible()
    expect(page.locator("#llr")).to_contain_text("0.00 in (-2.94, 2.94)")
    expect(page.locator("#reading")).to_contain_text("50% of the way from the lower bound")
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


@pytest.mark.django_db(transaction=True)
def test_the_test_form_shows_only_the_chosen_modes_fields(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    make_version(user, "walker", status=BotVersion.Status.RETIRED)
    make_version(user, "walker")
    log_in(user)
    page.goto(f"{site}/bots/walker/test/")
    expect(page.get_by_label("Opponent")).to_have_value(
        str(BotVersion.objects.get(number=1).pk)
    )  # the previous version
    games = page.locator('input[name="games"]')
    expect(page.get_by_label("elo1")).to_be_visible()
    expect(games).to_be_hidden()
    expect(games).to_be_disabled()  # hidden fields are neither required nor sent
    page.get_by_label("a fixed number of games", exact=True).check()
    expect(page.get_by_label("elo1")).to_be_hidden()
    expect(games).to_be_visible()
    assert_fits_the_screen(page)
    games.fill("6")
    page.get_by_role("button", name="Start the test").click()
    page.wait_for_url("**/tests/*/")
    duel = Duel.objects.get()
    assert duel.games == 6 and duel.elo1 is None


@pytest.mark.django_db(transaction=True)
def test_a_running_test_updates_its_figures_without_reloading(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    from arena.duels import services as duels

    old = make_version(user, "walker", status=BotVersion.Status.RETIRED)
    new = make_version(user, "walker")
    duel = duels.start_test(user, new, old, variant="yinsh", games=4)
    log_in(user)
    page.goto(f"{site}/tests/{duel.pk}/")
    expect(page.locator("#verdict")).to_have_text("running")
    expect(page.get_by_role("button", name="Cancel")).to_be_visible()
    page.evaluate("window.notReloaded = true")
    page.evaluate("window.scrollTo(0, 200)")
    scrolled = page.evaluate("window.scrollY")
    page.locator("#duel-live a").first.focus()
    play_pair(duel, 1.0, 1.0)
    expect(page.locator(".score").first).to_have_text("+2 =0 \u22120", timeout=15_000)
    assert page.evaluate("window.notReloaded") is True  # the same document, updated
    assert page.evaluate("window.scrollY") == scrolled
    assert page.evaluate("document.activeElement.closest('#duel-live') !== null")
    play_pair(duel, 0.0, 0.5)
    expect(page.locator("#verdict")).to_have_text("won", timeout=15_000)
    expect(page.get_by_role("button", name="Cancel")).to_have_count(0)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.wait_for_timeout(6_000)
    assert not [u for u in requests if "/live/" in u]  # finished: no more polling
    assert page.evaluate("window.notReloaded") is True
