"""The user's inbox (every notification, read and unread), the notification settings page,
its "send a test notification" button, and the verification of the account's email address
(the link mailed to it, and sending it again)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from arena.core.errors import Refused
from arena.notifications import services
from arena.notifications.models import Delivery
from arena.web.forms import NotificationSettingsForm
from arena.web.refusals import OnForm, form_status
from arena.web.views import AuthenticatedHttpRequest

#: Recent deliveries shown on the settings page.
RECENT = 10
#: Notifications on a page of the inbox.
INBOX_PAGE = 50


@login_required
def inbox(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The user's notifications, newest first, the unread ones marked."""
    user = request.user
    page = Paginator(services.inbox(user), INBOX_PAGE).get_page(request.GET.get("page"))
    context = {"page": page, "unread": services.unread_count(user), "extra": ""}
    return render(request, "web/inbox.html", context)


def _on_site(url: str) -> str:
    """A notification's URL as a path when it is one of this site's (``ARENA_SITE_URL``), so
    that the browser stays on the address it came from."""
    base = settings.SITE_URL.rstrip("/")
    return url.removeprefix(base) if url.startswith(base + "/") else url


@login_required
@require_http_methods(["GET", "POST"])
def inbox_open(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Open one notification: the browser goes to its page (or to it in the inbox when it has
    none). A POST (the inbox's subjects are buttons) marks it read; a GET only goes there.
    Another user's notification is not found."""
    if request.method == "POST":
        n = services.opened(request.user, pk)
    else:
        n = services.inbox(request.user).filter(pk=pk).first()
    if n is None:
        raise Http404("no such notification")
    if n.url:
        return redirect(_on_site(n.url))
    return redirect(f"{reverse('inbox')}#n{n.pk}")


@login_required
@require_POST
def inbox_read(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Mark every notification of the user read."""
    marked = services.mark_read(request.user)
    messages.success(
        request,
        f"{marked} notification{pluralize(marked)} marked read."
        if marked
        else "Nothing was unread.",
    )
    return redirect("inbox")


@login_required
def notification_settings(request: AuthenticatedHttpRequest) -> HttpResponse:
    user = request.user
    prefs = services.settings_of(user)
    form = NotificationSettingsForm(
        request.POST or None,
        initial={
            "email_address": user.email,
            "email": prefs.email,
            "webhook": prefs.webhook,
            "webhook_url": prefs.webhook_url,
            "events": prefs.events,
        },
    )
    on_form = OnForm(form, by_field=True)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        choices = services.Choices(
            email=data["email"],
            webhook=data["webhook"],
            webhook_url=data["webhook_url"],
            events=list(data["events"]),
        )
        # A refusal leaves the transaction (rolled back) before the form shows it.
        with on_form, transaction.atomic():
            services.update_settings(user, choices, email_address=data["email_address"])
            messages.success(request, "Your notification settings were saved.")
            return redirect("notifications")
    deliveries = (
        Delivery.objects.filter(notification__user=user)
        .select_related("notification")
        .order_by("-id")[:RECENT]
    )
    context = {
        "form": form,
        "deliveries": deliveries,
        "email_verified": services.is_verified(user),
    }
    return render(request, "web/notifications.html", context, status=on_form.status)


@login_required
@require_POST
def send_test(request: AuthenticatedHttpRequest) -> HttpResponse:
    """A test notification; a refusal (too many in a row) on a page sent with 429."""
    n = services.send_test(request.user)
    if n is None and request.user.email and not services.is_verified(request.user):
        messages.error(
            request,
            f"Nothing to send: {request.user.email} is not verified yet. Follow the link mailed "
            "to it (or send it again), or turn on a webhook.",
        )
    elif n is None:
        messages.error(
            request,
            "Nothing to send: turn on email (with an address) or a webhook, and save, first.",
        )
    else:
        channels = ", ".join(d.channel for d in n.deliveries.all())
        messages.success(request, f"A test notification is on its way ({channels}).")
    return redirect("notifications")


@login_required
@require_POST
def send_verification(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The verification link again; a refusal (too many in a row) on a page sent with 429."""
    n = services.send_verification(request.user)
    if n is None:
        messages.error(request, "There is no unverified address to verify.")
    else:
        messages.success(request, f"A verification link is on its way to {request.user.email}.")
    return redirect("notifications")


@never_cache
def verify_email(request: HttpRequest, token: str) -> HttpResponse:
    """The link mailed to an address: a button that verifies it (a POST, so that a mail
    scanner that opens links verifies nothing), then a page that says it was done."""
    context: dict[str, object] = {"token": token}
    if request.method == "POST":
        try:
            user = services.confirm_email(token)
        except Refused as e:
            context["error"] = str(e)
            return render(request, "web/verify_email.html", context, status=form_status(e))
        context["verified"] = user.email
    return render(request, "web/verify_email.html", context)
