"""Limits on guessing passwords: the login form and ``POST /api/token/`` lock a username tried
from one address, and an address trying many usernames, for a cool-off; the refusal says when
to try again, the right password included; a login that succeeds forgets that account's
failures; other addresses are not locked out. Password reset requests are limited per address
and per email."""

from __future__ import annotations

from typing import Any

import pytest
from axes.models import AccessAttempt
from django.core import mail
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from tests.arena.conftest import verified_address

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-password-1"  # the user fixture's
HERE, ELSEWHERE = "203.0.113.7", "198.51.100.9"


@pytest.fixture(autouse=True)
def limits(settings: Any) -> None:
    # Django's fastest hasher keeps the many logins here quick (the limits act before it).
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.LOGIN_FAILURES_PER_ACCOUNT = 3
    settings.LOGIN_FAILURES_PER_ADDRESS = 5
    settings.LOGIN_COOL_OFF_MINUTES = 15


def web_login(username: str, password: str, address: str = HERE) -> Any:
    c = Client(REMOTE_ADDR=address)
    r = c.post("/accounts/login/", {"username": username, "password": password})
    r.logged_in = "_auth_user_id" in c.session
    return r


def api_login(username: str, password: str, address: str = HERE) -> Any:
    c = APIClient(REMOTE_ADDR=address)
    return c.post("/api/token/", {"username": username, "password": password}, format="json")


def test_the_right_password_logs_in_and_a_wrong_one_is_refused_as_before(user: Any) -> None:
    assert web_login("alice", "wrong").status_code == 200
    r = web_login("alice", PASSWORD)
    assert r.status_code == 302 and r.logged_in
    assert api_login("alice", "wrong").status_code == 400
    assert "token" in api_login("alice", PASSWORD).json()


def test_guesses_at_one_account_lock_it_from_that_address_even_for_the_right_password(
    user: Any,
) -> None:
    assert web_login("alice", "wrong-1").status_code == 200
    assert web_login("alice", "wrong-2").status_code == 200
    third = web_login("alice", "wrong-3")
    assert third.status_code == 429
    r = web_login("alice", PASSWORD)
    assert r.status_code == 429 and not r.logged_in
    page = r.content.decode()
    assert "Too many failed logins from your address" in page
    assert "try again in 15 minutes" in page
    assert '<form method="post"' in page  # on the login form, which can be tried again later
    assert 1 <= int(r["Retry-After"]) <= 15 * 60
    # The same through the API: a 429 whose detail says when, no token.
    api = api_login("alice", PASSWORD)
    assert api.status_code == 429
    assert "try again in 15 minutes" in api.json()["detail"]
    assert 1 <= int(api["Retry-After"]) <= 15 * 60
    assert "token" not in api.json()


def test_guesses_through_the_api_lock_the_login_form_too(user: Any) -> None:
    for n in range(2):
        assert api_login("alice", f"wrong-{n}").status_code == 400
    last = api_login("alice", "wrong-2")
    assert last.status_code == 429
    assert last.json()["detail"].startswith("too many failed logins from your address")
    r = web_login("alice", PASSWORD)
    assert r.status_code == 429 and not r.logged_in


def test_refused_logins_while_locked_do_not_make_the_wait_longer(user: Any) -> None:
    for n in range(3):
        web_login("alice", f"wrong-{n}")
    counted = AccessAttempt.objects.get(username="alice").failures_since_start
    for _ in range(5):
        assert web_login("alice", "wrong").status_code == 429
    assert AccessAttempt.objects.get(username="alice").failures_since_start == counted == 3


def test_an_address_guessing_at_many_accounts_is_locked_for_every_account(
    user: Any, other_user: Any
) -> None:
    for name in ("carol", "dave", "erin", "frank"):  # one failure each: under the account limit
        assert web_login(name, "guess").status_code == 200
    assert api_login("bob", "guess").status_code == 429  # the fifth failure from the address
    r = web_login("alice", PASSWORD)
    assert r.status_code == 429 and not r.logged_in
    assert api_login("bob", "a-long-password-2").status_code == 429


def test_other_addresses_still_log_in_while_one_is_locked(user: Any, other_user: Any) -> None:
    for name in ("alice", "alice", "alice", "carol", "dave"):
        web_login(name, "guess")
    assert web_login("alice", PASSWORD).status_code == 429
    elsewhere = web_login("bob", "a-long-password-2", address=ELSEWHERE)
    assert elsewhere.status_code == 302 and elsewhere.logged_in
    # Nor can guessing from one address lock the account's owner out from another.
    own = web_login("alice", PASSWORD, address=ELSEWHERE)
    assert own.status_code == 302 and own.logged_in
    assert "token" in api_login("alice", PASSWORD, address=ELSEWHERE).json()


def test_a_login_that_succeeds_forgets_that_accounts_failures_only(
    user: Any, other_user: Any
) -> None:
    web_login("alice", "wrong-1")
    web_login("alice", "wrong-2")
    web_login("carol", "guess")
    assert web_login("alice", PASSWORD).logged_in
    assert not AccessAttempt.objects.filter(username="alice").exists()
    assert AccessAttempt.objects.filter(username="carol").exists()  # still counts
    web_login("alice", "wrong-3")
    web_login("alice", "wrong-4")
    assert web_login("alice", PASSWORD).logged_in  # two failures since: under the limit
    # Logging in to one's own account does not forgive guesses at others: bob's three lock
    # bob and stay counted for the address (carol's 1 + bob's 3), whose fifth locks it.
    for n in range(2):
        web_login("bob", f"wrong-{n}")
    assert web_login("bob", "wrong-2").status_code == 429
    assert web_login("alice", PASSWORD).logged_in
    assert web_login("bob", "a-long-password-2").status_code == 429
    assert web_login("dave", "guess").status_code == 429
    assert web_login("alice", PASSWORD).status_code == 429


def test_an_operator_unlocks_an_account_with_axes_reset_username(user: Any) -> None:
    for n in range(3):
        web_login("alice", f"wrong-{n}")
    assert web_login("alice", PASSWORD).status_code == 429
    call_command("axes_reset_username", "alice")
    assert web_login("alice", PASSWORD).logged_in


def test_a_username_longer_than_any_is_counted_not_a_server_error(user: Any) -> None:
    long = "x" * 5000
    for _ in range(2):
        assert api_login(long, "guess").status_code == 400
    assert api_login(long, "guess").status_code == 429
    assert AccessAttempt.objects.get().username == "x" * 150


def test_the_address_behind_a_proxy_is_the_one_it_saw_not_what_the_client_wrote(
    user: Any, settings: Any
) -> None:
    settings.PROXY_COUNT = 1
    proxy = "10.0.0.2"

    def through_proxy(client_address: str, written: str) -> Any:
        c = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR=f"{written}, {client_address}")
        return c.post("/accounts/login/", {"username": "alice", "password": "wrong"})

    for n in range(3):  # a new X-Forwarded-For each time does not make a new address
        through_proxy(HERE, f"192.0.2.{n}")
    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {HERE}
    assert through_proxy(HERE, "192.0.2.99").status_code == 429
    assert through_proxy(ELSEWHERE, "192.0.2.1").status_code == 200


# ----------------------------------------------------------------------------- password reset


def test_password_reset_requests_are_limited_per_address_and_per_email(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "password_reset": "2/hour"}
    verified_address(user, "alice@example.org")
    verified_address(other_user, "bob@example.org")
    c = Client(REMOTE_ADDR=HERE)
    for _ in range(2):
        r = c.post("/accounts/password/reset/", {"email": "alice@example.org"})
        assert r.status_code == 302
    assert len(mail.outbox) == 2
    r = c.post("/accounts/password/reset/", {"email": "bob@example.org"})  # the address's 3rd
    assert r.status_code == 429
    assert "too many password reset requests: at most 2 per hour; try again in" in (
        r.content.decode()
    )
    assert 1 <= int(r["Retry-After"]) <= 3600
    assert len(mail.outbox) == 2
    # From another address: bob's email is fine, alice's has had its two.
    other = Client(REMOTE_ADDR=ELSEWHERE)
    assert other.post("/accounts/password/reset/", {"email": "bob@example.org"}).status_code == 302
    r = other.post("/accounts/password/reset/", {"email": "ALICE@example.org"})
    assert r.status_code == 429
    assert [m.to for m in mail.outbox] == [["alice@example.org"]] * 2 + [["bob@example.org"]]
    # Unknown emails count the same: the limit says nothing about which are known.
    third = Client(REMOTE_ADDR="192.0.2.50")
    for _ in range(2):
        assert third.post("/accounts/password/reset/", {"email": "x@example.org"}).status_code == (
            302
        )
    assert third.post("/accounts/password/reset/", {"email": "x@example.org"}).status_code == 429


def test_a_password_reset_link_goes_to_the_accounts_address_verified_or_not(user: Any) -> None:
    # Following the link is itself the proof that the address is the user's; a user who never
    # verified it for notifications still gets back in.
    user.email = "alice@example.org"
    user.save(update_fields=["email"])
    r = Client().post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert r.status_code == 302
    assert [m.to for m in mail.outbox] == [["alice@example.org"]]
