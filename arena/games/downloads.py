"""The files people download: game records, transcripts, tournament and ladder archives.

Shared by the site's views and the API so that both serve the same bytes under stable names.
A transcript is served as its viewer may read it (:mod:`arena.games.privacy`). A file of many
games holds the record files one after another (:func:`games_file`), which
``python -m engine replay`` checks game by game.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Count, QuerySet
from django.db.models.functions import TruncMonth
from django.http import HttpResponse, StreamingHttpResponse

from arena.bots.models import Variant
from arena.games import privacy
from arena.games.models import Match, MatchRecord
from arena.games.privacy import Viewer
from arena.referee.jsontypes import JSON

RECORD_TYPE = "text/plain; charset=utf-8"
JSON_TYPE = "application/json"
ZIP_TYPE = "application/zip"


@dataclass(frozen=True)
class Download:
    content: bytes
    filename: str
    content_type: str

    def response(self, *, inline: bool = False) -> HttpResponse:
        r = HttpResponse(self.content, content_type=self.content_type)
        how = "inline" if inline else "attachment"
        r["Content-Disposition"] = f'{how}; filename="{self.filename}"'
        return r


@dataclass(frozen=True)
class Stream:
    """A download too big to hold in memory: sent in pieces as they are read."""

    chunks: Iterable[bytes]
    filename: str
    content_type: str

    def response(self) -> StreamingHttpResponse:
        r = StreamingHttpResponse(self.chunks, content_type=self.content_type)
        r["Content-Disposition"] = f'attachment; filename="{self.filename}"'
        return r


def record(data: MatchRecord, *, long: bool = True) -> Download:
    """The match's record file in the long (default) or short notation."""
    text = data.record if long else data.record_short
    suffix = "" if long else ".short"
    return Download(text.encode(), f"match-{data.match_id}{suffix}.txt", RECORD_TYPE)


def games_file(records: Iterable[str]) -> Iterator[str]:
    """The text of a file holding many games, in pieces: the stored record files one after
    another, a blank line between two, as :func:`engine.write_records` writes them and
    :func:`engine.read_records` (and ``python -m engine replay``) reads them."""
    for n, text in enumerate(records):
        if n:
            yield "\n"
        yield text if text.endswith("\n") else text + "\n"


def transcript_bytes(transcript: JSON) -> bytes:
    return (json.dumps(transcript, indent=1, ensure_ascii=False) + "\n").encode()


def transcript(data: MatchRecord, user: Viewer) -> Download:
    """The match's JSON transcript (every action and clock; the stderr and ``info`` of the
    colours whose logs ``user`` may read)."""
    shown = privacy.transcript_for(user, data.match, data.transcript)
    return Download(transcript_bytes(shown), f"match-{data.match_id}.json", JSON_TYPE)


# ----------------------------------------------------------------------------- ladder archives

_MONTH = re.compile(r"(\d{4})-(\d{2})")
#: Bytes per piece of a streamed archive (some hundred records).
CHUNK = 256 * 1024


@dataclass(frozen=True)
class LadderMonth:
    """The finished ladder games of one variant in one calendar month (UTC, by the time each
    game finished): one file to download."""

    variant: str
    first: dt.date
    games: int

    @property
    def month(self) -> str:
        """``2026-11``, as in the file's name and URL."""
        return f"{self.first:%Y-%m}"

    @property
    def variant_label(self) -> str:
        return Variant(self.variant).label

    @property
    def filename(self) -> str:
        return f"ladder-{self.variant}-{self.month}.txt"

    def _games(self) -> Iterator[str]:
        start, end = _bounds(self.first)
        return (
            MatchRecord.objects.filter(
                match__kind=Match.Kind.LADDER,
                match__variant=self.variant,
                match__status=Match.Status.FINISHED,
                match__finished_at__gte=start,
                match__finished_at__lt=end,
            )
            .order_by("match_id")
            .values_list("record", flat=True)
            .iterator(chunk_size=200)
        )

    def download(self) -> Stream:
        """The month's games one after another, in the order of their match numbers."""
        return Stream(_chunks(games_file(self._games())), self.filename, RECORD_TYPE)


def _bounds(first: dt.date) -> tuple[dt.datetime, dt.datetime]:
    """The month starting on ``first``: its first instant and the next month's (UTC)."""
    start = dt.datetime(first.year, first.month, 1, tzinfo=dt.UTC)
    return start, (start + dt.timedelta(days=32)).replace(day=1)


def _finished_ladder() -> QuerySet[Match]:
    return Match.objects.filter(kind=Match.Kind.LADDER, status=Match.Status.FINISHED)


def ladder_months(variant: str | None = None) -> list[LadderMonth]:
    """The months with finished ladder games, of one variant or of all, newest first (the
    variants in their usual order), with their numbers of games."""
    qs = _finished_ladder()
    if variant is not None:
        qs = qs.filter(variant=variant)
    rows = (
        qs.annotate(first=TruncMonth("finished_at", tzinfo=dt.UTC))
        .values("variant", "first")
        .annotate(games=Count("pk"))
    )
    order = {v: i for i, v in enumerate(Variant.values)}
    months = [LadderMonth(r["variant"], r["first"].date(), r["games"]) for r in rows]
    return sorted(months, key=lambda m: (order.get(m.variant, len(order)), -m.first.toordinal()))


def ladder_month(variant: str, month: str) -> LadderMonth | None:
    """The archive of ``variant`` in ``month`` (``2026-11``); None when the variant or the
    month is not one, or no ladder game of that variant finished in that month."""
    m = _MONTH.fullmatch(month)
    if variant not in Variant.values or not m:
        return None
    try:
        first = dt.date(int(m.group(1)), int(m.group(2)), 1)
        start, end = _bounds(first)
    except (ValueError, OverflowError):  # month 13, year 0 or 9999's December
        return None
    games = (
        _finished_ladder()
        .filter(variant=variant, finished_at__gte=start, finished_at__lt=end)
        .count()
    )
    return LadderMonth(variant, first, games) if games else None


def _chunks(pieces: Iterable[str]) -> Iterator[bytes]:
    """The pieces of a text, encoded, in chunks of about :data:`CHUNK` bytes."""
    size = CHUNK
    buf: list[bytes] = []
    held = 0
    for piece in pieces:
        data = piece.encode()
        buf.append(data)
        held += len(data)
        if held >= size:
            yield b"".join(buf)
            buf, held = [], 0
    if buf:
        yield b"".join(buf)
