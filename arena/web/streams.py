"""Server-sent events (``text/event-stream``): how the site pushes what changes to the pages that
show it, instead of their asking again and again.

A stream is a plain generator that a :class:`~django.http.StreamingHttpResponse` sends as it
yields, so it runs the same in a thread of ``manage.py runserver`` and of gunicorn's threaded
workers (docs/deployment.md). It calls its ``poll`` every ``STREAM_POLL_S`` seconds: ``poll``
looks at the database with a cheap query and answers the events to send (none when nothing
changed) and whether the thing watched is over. A stream sends a comment line when it has been
silent for ``STREAM_HEARTBEAT_S`` (proxies close idle connections), and it ends when the thing
is over or after ``STREAM_LIFETIME_S``, whichever comes first: the browser's ``EventSource``
then opens it again by itself after ``STREAM_RETRY_MS`` (the ``retry:`` field), sending the id
of the last event it had (``Last-Event-ID``), so it resumes where it was. So no stream holds a
web server's thread for long, and a stream that a client left is noticed at its next write.

Streams run in threads of their own: each closes its database connection when it ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, StreamingHttpResponse

__all__ = ["CONTENT_TYPE", "Event", "Poll", "encode", "events", "last_event_id", "response"]

CONTENT_TYPE = "text/event-stream"


@dataclass(frozen=True)
class Event:
    """One event: its type (what the page listens for), its data (one line of text, JSON as a
    rule) and its id, which the browser sends back as ``Last-Event-ID`` when it reconnects."""

    kind: str
    data: str
    id: str = ""


#: What a stream calls on every look: the events to send now, and whether the thing is over.
Poll = Callable[[], tuple[Sequence[Event], bool]]


def encode(event: Event) -> bytes:
    """An event in the stream's format (the WHATWG's "server-sent events"). The data is one line:
    a line break in it would start a field of its own.

    >>> encode(Event("feed", '{"plies": 3}', "1.3"))
    b'event: feed\\nid: 1.3\\ndata: {"plies": 3}\\n\\n'
    """
    if "\n" in event.data or "\r" in event.data:
        raise ValueError(f"an event's data must be one line: {event.data[:40]!r}")
    head = f"event: {event.kind}\n" + (f"id: {event.id}\n" if event.id else "")
    return f"{head}data: {event.data}\n\n".encode()


def events(poll: Poll) -> Iterator[bytes]:
    """The bytes of a stream: ``retry:`` first, then what ``poll`` answers, look after look,
    until the thing is over or the stream's lifetime is up (see the module's docstring). The
    settings are read once, when the stream starts: each keeps those it started with."""
    every, lifetime = settings.STREAM_POLL_S, settings.STREAM_LIFETIME_S
    heartbeat = settings.STREAM_HEARTBEAT_S
    started = time.monotonic()
    quiet_since = started
    try:
        yield f"retry: {settings.STREAM_RETRY_MS}\n\n".encode()
        while True:
            sent, over = poll()
            now = time.monotonic()
            for event in sent:
                yield encode(event)
                quiet_since = now
            if over or now - started >= lifetime:
                return
            if now - quiet_since >= heartbeat:
                yield b": still here\n\n"
                quiet_since = now
            time.sleep(every)
    finally:
        _close_connection()


def _close_connection() -> None:
    """The stream's thread is done with the database: give its connection back. Never inside a
    transaction that someone else opened around the stream (a stream opens none: its caller
    then owns the connection, as a test does)."""
    if not connection.in_atomic_block:
        connection.close()


def response(poll: Poll) -> StreamingHttpResponse:
    """The response that sends a stream: never cached, never held back by a proxy (nginx reads
    ``X-Accel-Buffering: no``: it then forwards each event as it comes)."""
    answer = StreamingHttpResponse(events(poll), content_type=f"{CONTENT_TYPE}; charset=utf-8")
    answer["Cache-Control"] = "no-store"
    answer["X-Accel-Buffering"] = "no"
    return answer


def last_event_id(request: HttpRequest, fallback: str = "") -> str:
    """The id of the last event a reconnecting browser had (the ``Last-Event-ID`` header), else
    what the page gave the stream's address (``fallback``, a query parameter as a rule)."""
    return request.headers.get("Last-Event-ID", "") or fallback
