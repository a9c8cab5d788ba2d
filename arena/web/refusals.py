"""The site's one mapping of a service's refusal (:class:`arena.core.errors.Refused`) to a
page: on the form that asked (:class:`OnForm`), or, when no form shows it, as a small page of
its own sent with its status (:func:`page`, which :class:`arena.web.middleware.RefusalPages`
answers with)."""

from __future__ import annotations

from http import HTTPStatus
from types import TracebackType

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from arena.core.errors import Refused

__all__ = ["OnForm", "form_status", "page"]


def form_status(refused: Refused) -> int:
    """The status of a form shown again with ``refused`` on it: a form with something to
    correct is a page like any other (200, as Django's forms answer), but a refusal that a
    correction does not cure keeps its own (409, 429...).

    >>> from arena.core.throttles import Rate, Throttled
    >>> form_status(Refused("no")), form_status(Throttled("upload", Rate(1, 60), 30))
    (200, 429)
    """
    return 200 if refused.status == 400 else refused.status


class OnForm:
    """Shows a service's refusal on the form that asked for the work. Wrapped around the call,
    it adds a refusal's message to the form (at its top; with ``by_field``, beside the field
    the refusal is about when the form has it), goes on after the ``with`` block and keeps the
    status to send the form with::

        on_form = OnForm(form)
        if request.method == "POST" and form.is_valid():
            with on_form:
                version = bots.add_version(request.user, bot, file, filename=file.name)
                return redirect(bot)
        return render(request, "web/upload_version.html", context, status=on_form.status)

    Anything else the call raises goes on up.
    """

    def __init__(self, form: forms.BaseForm, *, by_field: bool = False) -> None:
        self.form = form
        self.by_field = by_field
        #: The status to send the form with: 200 until a refusal says otherwise.
        self.status = 200
        #: The refusal shown, if any.
        self.refused: Refused | None = None

    def __enter__(self) -> OnForm:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        if not isinstance(error, Refused):
            return False
        field = error.field if self.by_field and error.field in self.form.fields else None
        self.form.add_error(field, str(error))
        self.status = form_status(error)
        self.refused = error
        return True


def page(request: HttpRequest, refused: Refused) -> HttpResponse:
    """A refusal that no form shows: its words on a small page, with its status and headers."""
    response = render(
        request,
        "web/refused.html",
        {"title": HTTPStatus(refused.status).phrase, "message": str(refused)},
        status=refused.status,
    )
    for name, value in refused.headers().items():
        response[name] = value
    return response
