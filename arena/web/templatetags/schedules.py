"""The tournaments page's list of upcoming scheduled events: ``{% upcoming_events %}``."""

from __future__ import annotations

from django import template

from arena.tournaments import schedules

register = template.Library()


@register.inclusion_tag("web/_upcoming_events.html")
def upcoming_events() -> dict[str, object]:
    """The active schedules, the soonest first, with the bots each would take now."""
    return {"upcoming": schedules.upcoming()}
