"""The pages of remote bots: register one, start its new version, download the client.

A remote bot's program runs on its owner's machine; the reference client
(``bots/remote/client.py``, served here as it is in the source) connects it to the arena
(:mod:`arena.games.remote`, docs/protocol.md "Remote bots").
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from arena.bots import services as bots
from arena.bots.models import Bot
from arena.games import downloads
from arena.web import forms
from arena.web.refusals import OnForm

__all__ = ["CLIENT", "client", "new_version", "register"]

#: The reference client, served as the source holds it.
CLIENT = Path(settings.BASE_DIR) / "bots" / "remote" / "client.py"


class AuthenticatedHttpRequest(HttpRequest):
    user: User


@login_required
def register(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Register a bot that runs on its owner's machine (no file)."""
    form = forms.RemoteBotForm(request.POST or None)
    on_form = OnForm(form)
    if request.method == "POST" and form.is_valid():
        with on_form:
            version = bots.create_remote_bot(
                request.user,
                form.cleaned_data["name"],
                variants=form.cleaned_data["variants"],
                description=form.cleaned_data["description"],
            )
            messages.success(
                request, f"{version.label} is registered; connect it with the client below."
            )
            return redirect(version.bot)
    context = {"form": form, "latency_ms": settings.REMOTE_LATENCY_MS}
    return render(request, "web/remote_register.html", context, status=on_form.status)


@login_required
@require_POST
def new_version(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    """Start a remote bot's new version (its owner changed its program): active at once."""
    bot = get_object_or_404(Bot, name=name)
    if not bots.can_manage(request.user, bot):
        raise PermissionDenied
    try:
        version = bots.add_remote_version(request.user, bot)
    except bots.UploadError as e:
        messages.error(request, str(e))
    else:
        messages.success(request, f"{version.label} is the active version.")
    return redirect(bot)


def client(request: HttpRequest) -> HttpResponse:
    """The reference client, a Python file to save and run."""
    return downloads.Download(CLIENT.read_bytes(), "client.py", "text/x-python").response()
