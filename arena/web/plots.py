"""Small inline SVG charts drawn on the server (no JavaScript, no build step)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

COLOURS = ("#1f6feb", "#d1242f", "#1a7f37", "#9a6700", "#8250df", "#bf3989", "#0a7c86")
#: How far beyond the lines a band may widen the chart's scale (Elo): a provisional rating's
#: interval can be many hundreds wide; the band is cut at the chart's edge instead.
BAND_REACH = 300.0


#: The steps between the Elo axis' ticks: the smallest that gives at most five intervals.
STEPS = (10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000)
#: How the time axis' ends are written, on every chart alike (in UTC).
TIME_FORMAT = "%Y-%m-%d %H:%M"


@dataclass(frozen=True)
class Series:
    """One line of a chart: its ``points`` (time, Elo) and its legend. ``now`` is the rating
    the legend gives: the current one (the table's), which a refit may have moved since the
    last point; the last point's when not given. ``errors``: the band around the line."""

    label: str
    points: Sequence[tuple[datetime, float]]
    now: float | None = None
    #: The half-width of each point's 95% interval (None where unknown): drawn as a band.
    errors: Sequence[float | None] = ()

    def band(self) -> list[list[tuple[datetime, float, float]]]:
        """The runs of consecutive points whose interval is known: ``(time, low, high)``."""
        runs: list[list[tuple[datetime, float, float]]] = [[]]
        for (t, elo), err in zip(self.points, self.errors, strict=False):
            if err is None:
                runs.append([])
            else:
                runs[-1].append((t, elo - err, elo + err))
        return [r for r in runs if r]

    @property
    def current(self) -> float:
        return self.now if self.now is not None else self.points[-1][1]


def elo_ticks(lo: float, hi: float) -> list[int]:
    """Round values for the Elo axis, evenly spaced, from below ``lo`` to above ``hi``::

    >>> elo_ticks(1012, 1377)
    [1000, 1100, 1200, 1300, 1400]
    >>> elo_ticks(985, 1025)
    [980, 990, 1000, 1010, 1020, 1030]
    >>> elo_ticks(1000, 1000)
    [990, 1000, 1010]
    """
    step = next((s for s in STEPS if math.ceil(hi / s) - math.floor(lo / s) <= 5), STEPS[-1])
    first, last = math.floor(lo / step), math.ceil(hi / step)
    if last - first < 2:  # at least three ticks
        first, last = first - 1, max(last, first + 1)
    return [k * step for k in range(first, last + 1)]


def history_svg(series: Sequence[Series], *, width: int = 640, height: int = 220) -> SafeString:
    """A line chart of ratings over time, one line per series, each in its 95% band (where
    the series has errors), with a legend.

        >>> from datetime import datetime, UTC
        >>> svg = history_svg([Series("a v1", [(datetime(2026, 1, 1, tzinfo=UTC), 1000.0),
        ...                                    (datetime(2026, 1, 2, tzinfo=UTC), 1100.0)])])
        >>> svg.startswith("<svg") and "polyline" in svg and "a v1" in svg
        True
    """
    drawn = [s for s in series if s.points]
    if not drawn:
        return mark_safe("")
    left, right, top, bottom = 48, 12, 20, 24 + 16 * len(drawn)
    times = [t.timestamp() for s in drawn for t, _ in s.points]
    elos = [e for s in drawn for _, e in s.points]
    t0, t1 = min(times), max(times)
    if t1 - t0 < 1:
        t0, t1 = t0 - 1, t1 + 1
    lo, hi = min(elos), max(elos)
    ends = [e for s in drawn for run in s.band() for _, low, high in run for e in (low, high)]
    if ends:
        lo = min(lo, max(min(ends), lo - BAND_REACH))
        hi = max(hi, min(max(ends), hi + BAND_REACH))
    ticks = elo_ticks(lo, hi)
    lo, hi = float(ticks[0]), float(ticks[-1])
    plot_w = width - left - right
    plot_h = height - top - bottom

    def x(t: float) -> float:
        return left + (t - t0) / (t1 - t0) * plot_w

    def y(e: float) -> float:
        return top + (hi - e) / (hi - lo) * plot_h

    def y_in(e: float) -> float:
        """A band's edge, kept inside the plot area."""
        return min(top + plot_h, max(top, y(e)))

    parts = [
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="rating history" xmlns="http://www.w3.org/2000/svg">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" class="chart-area"/>',
    ]
    for value in ticks:
        yy = y(value)
        parts.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{yy:.1f}" y2="{yy:.1f}" class="grid"/>'
            f'<text x="{left - 4}" y="{yy + 4:.1f}" text-anchor="end" class="tick-y">{value}</text>'
        )
    parts.append(
        f'<text x="{left - 4}" y="{top - 6}" text-anchor="end" class="axis-title">Elo</text>'
    )
    first, last = (datetime.fromtimestamp(t, UTC).strftime(TIME_FORMAT) for t in (t0, t1))
    below = top + plot_h + 14
    parts.append(f'<text x="{left}" y="{below}" class="tick-x">{first}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{below}" text-anchor="middle" '
        'class="axis-title">time (UTC)</text>'
    )
    parts.append(
        f'<text x="{left + plot_w}" y="{below}" text-anchor="end" class="tick-x">{last}</text>'
    )
    for i, s in enumerate(drawn):
        colour = COLOURS[i % len(COLOURS)]
        for run in s.band():
            if len(run) == 1:
                t, low, high = run[0]
                xx = x(t.timestamp())
                parts.append(
                    f'<line x1="{xx:.1f}" x2="{xx:.1f}" y1="{y_in(low):.1f}" '
                    f'y2="{y_in(high):.1f}" stroke="{colour}" stroke-opacity="0.4" '
                    f'stroke-width="6" class="band"/>'
                )
                continue
            upper = [f"{x(t.timestamp()):.1f},{y_in(high):.1f}" for t, _, high in run]
            lower = [f"{x(t.timestamp()):.1f},{y_in(low):.1f}" for t, low, _ in reversed(run)]
            parts.append(
                f'<polygon points="{" ".join(upper + lower)}" fill="{colour}" '
                f'fill-opacity="0.15" stroke="none" class="band"/>'
            )
    for i, s in enumerate(drawn):
        colour = COLOURS[i % len(COLOURS)]
        pts = " ".join(f"{x(t.timestamp()):.1f},{y(e):.1f}" for t, e in s.points)
        parts.append(f'<polyline points="{pts}" fill="none" stroke="{colour}" stroke-width="2"/>')
        if len(s.points) == 1:
            px, py = pts.split(",")
            parts.append(f'<circle cx="{px}" cy="{py}" r="3" fill="{colour}"/>')
        ly = top + plot_h + 30 + 16 * i
        parts.append(
            f'<rect x="{left}" y="{ly - 9}" width="12" height="4" fill="{colour}"/>'
            f'<text x="{left + 18}" y="{ly}">{escape(s.label)} '
            f"(now {s.current:.0f})</text>"
        )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # every value above is a number or escaped
