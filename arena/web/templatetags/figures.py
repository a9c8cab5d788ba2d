"""Statistics as pages show them: ``{{ x|elo }}`` (``+12.3``, a true minus sign, ``+∞``, a
dash when unknown) and ``{{ p|percent }}`` (``97.5%``, a dash when unknown)."""

from __future__ import annotations

import math

from django import template

register = template.Library()

MINUS = "\u2212"
#: What a page shows for a figure not known (an en dash).
NONE = "\u2013"


@register.filter
def elo(x: float | None) -> str:
    """An Elo difference with its sign and a true minus sign.

    >>> elo(12.34), elo(-4.0) == "\u22124.0", elo(float("inf")), elo(float("nan")) == NONE
    ('+12.3', True, '+∞', True)
    """
    if x is None or math.isnan(x):
        return NONE
    if math.isinf(x):
        return "+∞" if x > 0 else f"{MINUS}∞"
    return f"{x:+.1f}".replace("-", MINUS)


@register.filter
def percent(x: float | None) -> str:
    """A probability or a score in [0, 1] as a percentage.

    >>> percent(0.975), percent(float("nan")) == NONE
    ('97.5%', True)
    """
    if x is None or math.isnan(x):
        return NONE
    return f"{100 * x:.1f}%"
