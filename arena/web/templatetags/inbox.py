"""The header's unread count: ``{% unread_count as unread %}`` (0 for a visitor), one ``COUNT``
query, made only where the template asks for it (the header of a signed-in user's page)."""

from __future__ import annotations

from django import template

from arena.notifications import services

register = template.Library()


@register.simple_tag(takes_context=True)
def unread_count(context: template.Context) -> int:
    """How many notifications of the signed-in user are unread."""
    user = context.get("user")
    if user is None or not user.is_authenticated:
        return 0
    return services.unread_count(user.pk)
