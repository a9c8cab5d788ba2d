"""The API's errors: a status that says who is at fault, and a JSON ``detail`` that says why."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from arena.bots.models import NAME_MAX_LENGTH, NAME_MIN_LENGTH, Bot
from tests.arena.api.test_api import bot_file, client_for
from tests.arena.conftest import make_version


@pytest.mark.django_db
def test_resuming_a_running_tournament_is_a_409_that_says_why(user: Any) -> None:
    for name in ("t-a", "t-b"):
        make_version(user, name)
    c = client_for(user)
    body = {"name": "Cup", "variant": "blitz", "time_control": "5+0.1", "bots": ["t-a", "t-b"]}
    tid = c.post("/api/tournaments/", body, format="json").json()["id"]
    r = c.post(f"/api/tournaments/{tid}/resume/")
    assert r.status_code == 409
    assert r.json()["detail"] == "Cup cannot be resumed: it is running."
    assert c.get(f"/api/tournaments/{tid}/").json()["status"] == "running"


@pytest.mark.django_db
def test_no_token_or_a_bad_one_is_a_401_that_names_the_scheme(user: Any) -> None:
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    for c in (APIClient(), bad):
        r = c.post("/api/bots/", {"name": "x1", "file": bot_file()}, format="multipart")
        assert r.status_code == 401
        assert r["WWW-Authenticate"] == "Token"
        assert r.json()["detail"]
    assert bad.get("/api/bots/").status_code == 401
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_a_logged_in_user_who_may_not_act_gets_a_403(user: Any, other_user: Any) -> None:
    make_version(user, "mine")
    r = client_for(other_user).patch("/api/bots/mine/", {"description": "x"}, format="json")
    assert r.status_code == 403 and r.json()["detail"]
    assert "WWW-Authenticate" not in r


@pytest.mark.django_db
def test_every_refusal_by_field_also_has_a_detail(user: Any) -> None:
    r = client_for(user).post("/api/tournaments/", {"name": "Cup"}, format="json")
    assert r.status_code == 400
    assert r.json()["variant"] and "variant: " in r.json()["detail"]


@pytest.mark.django_db
def test_a_bad_bot_name_is_refused_with_the_rule_for_names(user: Any) -> None:
    r = client_for(user).post(
        "/api/bots/", {"name": "Bad_Name!", "file": bot_file()}, format="multipart"
    )
    assert r.status_code == 400
    (message,) = r.json()["name"]
    assert f"{NAME_MIN_LENGTH} to {NAME_MAX_LENGTH} characters" in message
    assert "lower-case letters, digits, - and _" in message
    assert not Bot.objects.exists()


def test_the_schema_documents_401_apart_from_403() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            assert {"401", "403"} <= set(op["responses"]), (method, path)
    resume = schema["paths"]["/api/tournaments/{id}/resume/"]["post"]["responses"]["409"]
    assert resume["content"]["application/json"]["schema"]["$ref"].endswith("/Detail")


#: Bodies that are not JSON however they look: nested 100,000 arrays deep (Python's json module
#: reads them by recursion), and not the UTF-8 they are sent as.
BAD_JSON = {
    "deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "not-utf8": (b'{"name": "caf\xff\xfe"}', "JSON parse error"),
}


@pytest.mark.django_db
@pytest.mark.parametrize("body", list(BAD_JSON))
@pytest.mark.parametrize("anonymous", [True, False], ids=["anonymous", "token"])
def test_a_body_that_is_not_json_is_a_400_on_every_operation(
    user: Any, anonymous: bool, body: str
) -> None:
    """Every operation of the schema that takes a body, given one of ``BAD_JSON``: a 4xx with
    a ``detail`` (a 400 that says why where the body is read), never a server error."""
    from drf_spectacular.generators import SchemaGenerator

    data, why = BAD_JSON[body]
    make_version(user, "deep-bot")
    c = client_for(None if anonymous else user)
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]
    real = {"name": "deep-bot", "id": "1"}
    read = []
    for template, operations in paths.items():
        url = template
        for key, value in real.items():
            url = url.replace("{" + key + "}", value)
        for method, operation in operations.items():
            if "requestBody" not in operation:
                continue
            r = getattr(c, method)(url, data, content_type="application/json")
            assert r.status_code < 500, (method, url, r.status_code)
            assert r.json()["detail"], (method, url)
            if r.status_code == 400:
                assert why in r.json()["detail"], (method, url, r.json())
                read.append((method, template))
    if anonymous:
        assert ("post", "/api/token/") in read
    else:
        for expected in [
            ("post", "/api/token/"),
            ("post", "/api/duels/"),
            ("post", "/api/tournaments/"),
            ("put", "/api/notifications/settings/"),
            ("patch", "/api/bots/{name}/"),
        ]:
            assert expected in read


@pytest.mark.django_db
def test_text_fields_take_only_json_strings(user: Any) -> None:
    """A number or a boolean where text is asked for is a 400, not text made of it."""
    make_version(user, "texty")
    api = client_for(user)
    for value in (0, 1.5, True):
        r = api.patch("/api/bots/texty/", {"description": value}, format="json")
        assert r.status_code == 400 and "description" in r.json(), (value, r.content)
    assert api.get("/api/bots/texty/").json()["description"] == ""
    r = api.patch("/api/bots/texty/", {"description": "plays fast"}, format="json")
    assert r.status_code == 200 and r.json()["description"] == "plays fast"
