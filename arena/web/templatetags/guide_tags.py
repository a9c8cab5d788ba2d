"""``{% load guide_tags %}``: the guide's page that says how to fix a rejection."""

from __future__ import annotations

from django import template

from arena.web.guide import Fix, how_to_fix

register = template.Library()


@register.filter
def fix_for(reason: str) -> Fix | None:
    """``{% with fix=version.reason|fix_for %}``: see :func:`arena.web.guide.how_to_fix`."""
    return how_to_fix(reason or "")
