"""Password reset by email: Django's views with the site's templates.

The link in the email starts with ``ARENA_SITE_URL`` (as notifications' links do), never with
the Host header of the request that asked for it. Whether an address is known is not said.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import path, reverse_lazy


class PasswordResetView(auth_views.PasswordResetView):
    template_name = "registration/password_reset_form.html"
    email_template_name = "registration/password_reset_email.txt"
    subject_template_name = "registration/password_reset_subject.txt"
    success_url = reverse_lazy("password_reset_done")

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
