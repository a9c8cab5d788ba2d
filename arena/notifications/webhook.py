"""Posting a notification to a user's webhook, safely.

A webhook URL is the user's input, and the server is the one that connects: so only ``http``
and ``https`` URLs are accepted, and only to public addresses. The host name is resolved and
every address it has is checked when the URL is saved; when the message is sent, the address
actually connected to is checked again before a byte goes out (a name that resolves to a
public address at first and a private one later gets nothing). Redirects are not followed.
``ARENA_WEBHOOK_ALLOW_PRIVATE`` lifts the address rule, for tests and a local arena.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from arena.core.errors import Refused
from arena.referee.jsontypes import JSONObject

__all__ = ["WebhookError", "check_url", "post"]

#: Discord refuses a ``content`` over 2,000 characters.
CONTENT_LIMIT = 2000
#: At most this much of a response body is kept in an error.
BODY_EXCERPT = 200


class WebhookError(Refused, ValueError):
    """The URL cannot be used, or the endpoint did not accept the message: a 400 about the
    webhook URL when a request gave it."""

    field = "webhook_url"


def _allowed(address: str) -> bool:
    if settings.WEBHOOK_ALLOW_PRIVATE:
        return True
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def check_url(url: str, *, resolve: bool = True) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of a webhook URL that may be used, else
    :class:`WebhookError` saying why. ``resolve``: also look the host up and refuse it if any
    of its addresses is private, loopback, link-local or otherwise not public.

    >>> check_url("ftp://example.com/x", resolve=False)
    Traceback (most recent call last):
    ...
    arena.notifications.webhook.WebhookError: a webhook URL starts with http:// or https://
    """
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as e:
        raise WebhookError(f"not a URL: {e}") from None
    if parts.scheme not in ("http", "https"):
        raise WebhookError("a webhook URL starts with http:// or https://")
    host = parts.hostname or ""
    if not host:
        raise WebhookError("the URL has no host")
    if parts.username or parts.password:
        raise WebhookError("the URL may not hold a user name or password before the host")
    port = port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if resolve:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as e:
            raise WebhookError(f"the host {host} cannot be found ({e})") from None
        for info in infos:
            address = str(info[4][0])
            if not _allowed(address):
                raise WebhookError(
                    f"the host {host} is at {address}, which is not a public address"
                )
    return parts.scheme, host, port, path


def _guarded(create: Callable[..., socket.socket]) -> Callable[..., socket.socket]:
    """``socket.create_connection`` that refuses a peer at an address not allowed."""

    def connect(*args: Any, **kwargs: Any) -> socket.socket:
        sock = create(*args, **kwargs)
        peer = str(sock.getpeername()[0])
        if not _allowed(peer):
            sock.close()
            raise WebhookError(f"refused to send to {peer}: not a public address")
        return sock

    return connect


def payload(event: str, subject: str, text: str, url: str, data: JSONObject) -> JSONObject:
    """The JSON body: ``content`` (what Discord shows), ``text`` (what Slack shows), and the
    same in fields a program reads."""
    message = "\n".join(part for part in (f"**{subject}**", text, url) if part)
    return {
        "content": message[:CONTENT_LIMIT],
        "text": message,
        "event": event,
        "subject": subject,
        "message": text,
        "url": url,
        "data": data,
        "site": settings.SITE_NAME,
    }


def post(url: str, body: JSONObject, *, timeout: float | None = None) -> int:
    """POST ``body`` as JSON to ``url``; the response status (2xx) or :class:`WebhookError`
    (a refused URL or address, a connection that failed, any other status)."""
    scheme, host, port, path = check_url(url, resolve=False)
    timeout = settings.WEBHOOK_TIMEOUT_S if timeout is None else timeout
    conn_class = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
    conn = conn_class(host, port, timeout=timeout)
    conn._create_connection = _guarded(conn._create_connection)  # type: ignore[attr-defined]  # http.client's documented hook, absent from the stubs
    data = json.dumps(body, ensure_ascii=False).encode()
    try:
        conn.request(
            "POST",
            path,
            body=data,
            headers={
                "Content-Type": "application/json",
                "User-Agent": f"{settings.SITE_NAME} notifications",
            },
        )
        response = conn.getresponse()
        excerpt = response.read(BODY_EXCERPT).decode("utf-8", "replace")
    except WebhookError:
        raise
    except (OSError, http.client.HTTPException) as e:
        raise WebhookError(f"could not post to {host}: {type(e).__name__}: {e}") from None
    finally:
        conn.close()
    if not 200 <= response.status < 300:
        raise WebhookError(f"{host} answered {response.status} {response.reason}: {excerpt}")
    return response.status
