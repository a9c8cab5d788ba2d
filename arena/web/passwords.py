"""Password reset by email: Django's views with the site's templates.

The link in the email starts with ``ARENA_SITE_URL`` (as notifications' links do), never with
the Host header of the request that asked for it. Whether an address is known is not said.
The link goes to the account's own address, verified for notifications or not: following it
is itself the proof that the address is the user's, and it is what a forgotten password needs.
Requests are limited per address of the client and per email asked for
(``ARENA_THROTTLE_PASSWORD_RESET``), so no one floods an address with them: over the rate, the
form says when to try again (429), whether the email is known or not.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import PasswordResetForm
from django.http import HttpResponse
from django.urls import path, reverse_lazy

from arena.core import throttles
from arena.web import clients
from arena.web.refusals import OnForm


class PasswordResetView(auth_views.PasswordResetView):
    template_name = "registration/password_reset_form.html"
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    success_url = reverse_lazy("password_reset_done")

    def form_valid(self, form: PasswordResetForm) -> HttpResponse:
        """Count the request by the client's address and by the email; over either rate, the
        form again with the refusal on it."""
        on_form = OnForm(form)
        with on_form:
            email = form.cleaned_data["email"]
            subjects = [f"address:{clients.address(self.request)}", f"email:{email.casefold()}"]
            for subject in subjects:
                throttles.check_key(subject, "password_reset")
            for subject in subjects:
                throttles.record_key(subject, "password_reset")
            return super().form_valid(form)
        response = self.render_to_response(self.get_context_data(form=form), status=on_form.status)
        if on_form.refused is not None:
            for name, value in on_form.refused.headers().items():
                response[name] = value
        return response

    @property
    def extra_email_context(self) -> dict[str, str]:
        """The site's address when the email is written (the setting may change)."""
        return {"site_url": settings.SITE_URL.rstrip("/")}


reset = PasswordResetView.as_view()
reset_done = auth_views.PasswordResetDoneView.as_view(
    template_name="registration/password_reset_done.html",
    extra_context={"timeout_days": settings.PASSWORD_RESET_TIMEOUT // 86400},
)
reset_confirm = auth_views.PasswordResetConfirmView.as_view(
    template_name="registration/password_reset_confirm.html",
    success_url=reverse_lazy("password_reset_complete"),
)
reset_complete = auth_views.PasswordResetCompleteView.as_view(
    template_name="registration/password_reset_complete.html"
)

urlpatterns = [
    path("accounts/password/reset/", reset, name="password_reset"),
    path("accounts/password/reset/sent/", reset_done, name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        reset_confirm,
        name="password_reset_confirm",
    ),
    path("accounts/password/reset/done/", reset_complete, name="password_reset_complete"),
]
