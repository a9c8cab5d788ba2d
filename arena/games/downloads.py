"""The files people download: game records, transcripts, tournament archives.

Shared by the site's views and the API so that both serve the same bytes under stable names.
A transcript is served as its viewer may read it (:mod:`arena.games.privacy`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.http import HttpResponse

from arena.games import privacy
from arena.games.models import MatchRecord
from arena.games.privacy import Viewer
from arena.jsontypes import JSON

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
