"""Refusals (:class:`arena.core.errors.Refused`): every one a request can meet answers with its
own status, the same on the API, on a form and on a page of its own."""

from __future__ import annotations

import doctest

import pytest
from django import forms
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.urls import include, path
from django.utils.html import escape
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.test import APIClient
from rest_framework.views import APIView

import arena.core.errors
import arena.web.refusals
from arena.admission.trials import NoOpponent, NotPlayed, TrialError
from arena.analysis.services import AnalysisError
from arena.bots.services import ActivationError, QuotaExceeded
from arena.bots.unpack import UploadError
from arena.core.errors import Refused
from arena.core.throttles import Rate, Throttled
from arena.duels.services import DuelError
from arena.games.filters import FilterError
from arena.games.headtohead import HeadToHeadError
from arena.games.people import PeopleError
from arena.games.reliability import ResumeError
from arena.games.remote import NotWaiting, RemoteError, UnknownGame
from arena.games.seasons import SeasonError
from arena.notifications.verification import VerificationError
from arena.notifications.webhook import WebhookError
from arena.tournaments.services import TournamentError
from arena.web.logins import LoginLocked
from arena.web.refusals import OnForm, form_status

#: Every refusal, with its status: a new one is listed here with the status it answers with.
STATUS: dict[type[Refused], int] = {
    UploadError: 400,
    QuotaExceeded: 400,
    ActivationError: 409,
    Throttled: 429,
    TournamentError: 400,
    DuelError: 400,
    FilterError: 400,
    HeadToHeadError: 400,
    WebhookError: 400,
    VerificationError: 400,
    LoginLocked: 429,
    ResumeError: 409,
    TrialError: 400,
    AnalysisError: 400,
    RemoteError: 400,
    PeopleError: 400,
    UnknownGame: 404,
    NotWaiting: 409,
    NoOpponent: 503,
    NotPlayed: 409,
    SeasonError: 400,
}


def example(kind: type[Refused]) -> Refused:
    """One refusal of each kind, as its service raises it."""
    if kind is Throttled:
        return Throttled("upload", Rate(1, 3600), 3600)
    if kind is LoginLocked:
        return LoginLocked(900)
    if kind is FilterError:
        return FilterError("bot", "there is no bot named 'nobody'")
    return kind(f"refused by {kind.__name__}")


def named(name: str) -> Refused:
    return example(next(k for k in STATUS if k.__name__ == name))


def refuse_page(request: HttpRequest, name: str) -> HttpResponse:
    raise named(name)


class RefuseApi(APIView):
    authentication_classes: list[type] = []
    permission_classes: list[type] = []
    throttle_classes: list[type] = []

    def get(self, request: Request, name: str) -> Response:
        raise named(name)


#: The site's URLs and two that refuse (for ``pytest.mark.urls``).
urlpatterns = [
    path("refused/<str:name>/", refuse_page),
    path("api/refused/<str:name>/", RefuseApi.as_view()),
    path("", include("arena.urls")),
]

kinds = pytest.mark.parametrize("kind", list(STATUS), ids=lambda k: k.__name__)


def every_subclass(cls: type[Refused]) -> set[type[Refused]]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *every_subclass(sub)}
    return out


def test_every_refusal_has_its_status_listed() -> None:
    assert every_subclass(Refused) == set(STATUS)
    assert {k: k.status for k in STATUS} == STATUS


def test_the_module_examples_hold() -> None:
    for module in (arena.core.errors, arena.web.refusals):
        failures, tried = doctest.testmod(module)
        assert tried and not failures, module.__name__


@kinds
@pytest.mark.urls(__name__)
def test_the_api_answers_a_refusal_with_its_status_words_and_headers(
    kind: type[Refused],
) -> None:
    refused = example(kind)
    r = APIClient().get(f"/api/refused/{kind.__name__}/")
    assert r.status_code == STATUS[kind]
    body = r.json()
    if STATUS[kind] == 400:
        # As any refused input: under its field's name, summed up in ``detail``.
        key = refused.field or "non_field_errors"
        assert body[key] == [str(refused)]
        assert body["detail"] == (f"{key}: {refused}" if refused.field else str(refused))
    else:
        assert body == {"detail": str(refused)}
    for name, value in refused.headers().items():
        assert r[name] == value


@kinds
@pytest.mark.urls(__name__)
def test_a_page_answers_a_refusal_no_form_shows_with_its_status_and_words(
    kind: type[Refused],
) -> None:
    refused = example(kind)
    r = Client().get(f"/refused/{kind.__name__}/")
    assert r.status_code == STATUS[kind]
    page = r.content.decode()
    # Its words, from a capital letter, on a page of the site.
    assert "<!doctype html>" in page and escape(str(refused))[1:] in page
    for name, value in refused.headers().items():
        assert r[name] == value


class WebhookForm(forms.Form):
    webhook_url = forms.CharField(required=False)


@kinds
def test_a_form_shows_a_refusal_and_keeps_a_status_other_than_400(kind: type[Refused]) -> None:
    form = WebhookForm({"webhook_url": "x"})
    assert form.is_valid()
    on_form = OnForm(form)
    with on_form:
        raise example(kind)
    assert on_form.status == (200 if STATUS[kind] == 400 else STATUS[kind])
    assert on_form.status == form_status(example(kind))
    assert form.non_field_errors() == [str(example(kind))]
    assert on_form.refused is not None and type(on_form.refused) is kind


def test_a_form_shows_a_refusal_beside_its_field_when_asked_and_it_has_the_field() -> None:
    form = WebhookForm({"webhook_url": "x"})
    assert form.is_valid()
    with OnForm(form, by_field=True):
        raise WebhookError("refused to send to 10.0.0.1: not a public address")
    assert form.errors == {"webhook_url": ["refused to send to 10.0.0.1: not a public address"]}
    other = WebhookForm({})
    assert other.is_valid()
    with OnForm(other, by_field=True):
        raise FilterError("bot", "there is no bot named 'nobody'")
    assert other.non_field_errors() == ["there is no bot named 'nobody'"]


def test_a_form_lets_anything_but_a_refusal_through() -> None:
    form = WebhookForm({})
    assert form.is_valid()
    on_form = OnForm(form)
    with pytest.raises(ValueError, match="not a refusal"), on_form:
        raise ValueError("not a refusal")
    assert on_form.status == 200 and on_form.refused is None and not form.errors
