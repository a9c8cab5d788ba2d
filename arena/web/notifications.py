"""The user's notification settings page and its "send a test notification" button."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from arena.notifications import services
from arena.notifications.models import Delivery
from arena.notifications.webhook import WebhookError
from arena.web.forms import NotificationSettingsForm
from arena.web.views import AuthenticatedHttpRequest

#: Recent deliveries shown on the page.
RECENT = 10


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
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        choices = services.Choices(
            email=data["email"],
            webhook=data["webhook"],
            webhook_url=data["webhook_url"],
            events=list(data["events"]),
        )
        try:
            with transaction.atomic():
                services.update_settings(user, choices, email_address=data["email_address"])
        except WebhookError as e:
            form.add_error("webhook_url", str(e))
        except ValueError as e:
            form.add_error(None, str(e))
        else:
            messages.success(request, "Your notification settings were saved.")
            return redirect("notifications")
    deliveries = (
        Delivery.objects.filter(notification__user=user)
        .select_related("notification")
        .order_by("-id")[:RECENT]
    )
    return render(request, "web/notifications.html", {"form": form, "deliveries": deliveries})


@login_required
@require_POST
def send_test(request: AuthenticatedHttpRequest) -> HttpResponse:
    n = services.send_test(request.user)
    if n is None:
        messages.error(
            request,
            "Nothing to send: turn on email (with an address) or a webhook, and save, first.",
        )
    else:
        channels = ", ".join(d.channel for d in n.deliveries.all())
        messages.success(request, f"A test notification is on its way ({channels}).")
    return redirect("notifications")
