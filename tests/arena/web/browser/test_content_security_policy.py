"""The Content-Security-Policy in a real browser: a script put into a page does not run, and
what the site's own pages do with scripts (asking before a delete) still works. That every
page draws under the policy is test_every_page's: a refusal is a console error there."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.bots.models import Bot
from tests.arena.conftest import make_version


@pytest.mark.django_db(transaction=True)
def test_a_script_put_into_a_page_does_not_run(
    page: Any, site: str, user: Any, page_errors: list[str]
) -> None:
    make_version(user, "walker")
    page.goto(f"{site}/bots/walker/")
    page.evaluate(
        """() => {
        const s = document.createElement("script");
        s.textContent = "window.injected = true";
        document.body.appendChild(s);
    }"""
    )
    assert page.evaluate("() => window.injected === undefined")
    assert any("Content Security Policy" in e for e in page_errors), page_errors
    page_errors.clear()  # the refusal was this test's point


@pytest.mark.django_db(transaction=True)
def test_the_owner_is_asked_before_a_delete_and_can_change_their_mind(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    make_version(user, "walker")
    log_in(user)
    page.goto(f"{site}/bots/walker/")
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", answer)
    page.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("heading", name="walker").first).to_be_visible()
    assert asked == ["Delete (or withdraw) walker?"]
    assert Bot.objects.filter(name="walker").exists()

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    page.wait_for_url(lambda url: "/bots/walker/" not in url)
    assert not Bot.objects.filter(name="walker").exists()
