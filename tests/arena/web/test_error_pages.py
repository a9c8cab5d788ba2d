"""The site's own error pages and the headers every answer carries: no debug page with the
URL list or a traceback, whatever ARENA_DEBUG's default; a Content-Security-Policy that
forbids inline scripts and framing."""

from __future__ import annotations

from typing import Any

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import Client, override_settings
from django.urls import path

from arena.urls import urlpatterns as site_urls


def broken(request: HttpRequest) -> HttpResponse:
    raise RuntimeError("/srv/secret/path: something the arena did")


urlpatterns = [path("broken/", broken), *site_urls]


@pytest.mark.django_db
def test_a_missing_page_is_the_sites_own_404_without_the_url_list() -> None:
    r = Client().get("/no/such/page/")
    assert r.status_code == 404
    text = r.content.decode()
    assert "Not found" in text and "/no/such/page/" in text
    assert "YINSH bot arena" in text and 'name="viewport"' in text  # the site's, for phones
    assert "URLconf" not in text and "urlpatterns" not in text


@pytest.mark.django_db
@override_settings(ROOT_URLCONF=__name__)
def test_a_server_error_is_the_sites_own_page_without_a_traceback() -> None:
    r = Client(raise_request_exception=False).get("/broken/")
    assert r.status_code == 500
    text = r.content.decode()
    assert "Server error" in text and 'name="viewport"' in text
    assert "Traceback" not in text and "/srv/secret" not in text and "RuntimeError" not in text


@pytest.mark.django_db
def test_another_users_private_page_is_the_sites_own_403(user: Any, other_user: Any) -> None:
    from tests.arena.conftest import make_version

    make_version(other_user, "theirs")
    c = Client()
    c.force_login(user)
    r = c.get("/bots/theirs/edit/")
    assert r.status_code in (403, 404)
    assert "YINSH bot arena" in r.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/bots/", "/api/docs/", "/no/such/page/"])
def test_every_answer_carries_the_content_security_policy(url: str) -> None:
    policy = Client().get(url)["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'"  # no inline script runs, injected or not
    assert directives["frame-ancestors"] == "'none'"
    assert directives["object-src"] == "'none'" and directives["form-action"] == "'self'"


@pytest.mark.django_db
def test_no_page_of_the_site_needs_an_inline_script(user: Any) -> None:
    from tests.arena.conftest import make_version

    make_version(user, "mine")
    c = Client()
    c.force_login(user)
    for url in ("/", "/bots/mine/", "/upload/", "/accounts/bots/", "/api/docs/"):
        text = c.get(url).content.decode()
        assert " onsubmit=" not in text and " onclick=" not in text, url
        for script in text.split("<script")[1:]:
            assert script.lstrip().startswith("src="), (url, script[:80])
