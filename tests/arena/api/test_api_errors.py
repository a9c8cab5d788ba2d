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
