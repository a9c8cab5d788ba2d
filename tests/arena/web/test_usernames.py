"""Sign-up refuses a username that looks like an existing one (Unicode's confusables, TR39
skeletons): a Cyrillic a for a Latin one, a capital I or a digit 1 for an l, another case."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

import arena.web.clients
import arena.web.usernames
from arena.web.usernames import skeleton, too_like

pytestmark = pytest.mark.django_db


def sign_up(name: str) -> Any:
    return Client().post(
        "/accounts/signup/",
        {"username": name, "password1": "a-long-password-7", "password2": "a-long-password-7"},
    )


@pytest.mark.parametrize(
    "name",
    [
        "\u0430lice",  # a Cyrillic a
        "alic\u0435",  # a Cyrillic e
        "\u0430l\u0456c\u0435",  # three Cyrillic letters
        "a1ice",
        "A1ice",
        "aIice",  # capital I for the l
        "\u03b1lice",  # Greek alpha
    ],
)
def test_a_name_that_looks_like_an_existing_one_is_refused(user: Any, name: str) -> None:
    r = sign_up(name)
    assert r.status_code == 200
    assert "This name is too like an existing name (alice); choose another." in (r.content.decode())
    assert list(User.objects.values_list("username", flat=True)) == ["alice"]


def test_names_that_only_share_letters_are_accepted(user: Any) -> None:
    for name in ("alicia", "malice", "al_ice", "bob"):
        assert sign_up(name).status_code == 302, name
    assert User.objects.count() == 5


def test_the_comparison_is_the_skeleton_of_both_names(user: Any) -> None:
    assert skeleton("\u0440\u0430\u0443\u0440\u0430l") == skeleton("paypal")
    assert too_like("\u0430lice") == "alice"
    assert too_like("carol") is None
    # A taken name itself, in any case, is Django's refusal ("already exists").
    for name in ("alice", "ALICE"):
        r = sign_up(name)
        assert "A user with that username already exists." in r.content.decode()
        assert "too like" not in r.content.decode()


def test_the_module_examples_hold() -> None:
    for module in (arena.web.usernames, arena.web.clients):
        failures, tried = doctest.testmod(module)
        assert tried and not failures, module.__name__
