"""The base of every refusal a request can meet, carrying its HTTP status.

A service refuses what it will not do with a subclass of :class:`Refused` whose message says
why, in a sentence for the user: a bad upload, a test that cannot start, too many actions in a
row. The site and the API map every refusal the same way, in one place each:

- the API answers with its status and ``{"detail": message}``; a 400 names its field too, as
  any refused input does (:func:`arena.api.views.exception_handler`);
- a form shows the message (:class:`arena.web.refusals.OnForm`), and a refusal that no form
  shows is a small page sent with its status (:class:`arena.web.middleware.RefusalPages`).

What the machine did wrong (a store, a sandbox, a database) is no refusal: it is an
:class:`~arena.referee.errors.InfrastructureError`.
"""

from __future__ import annotations

from typing import ClassVar

__all__ = ["Refused"]


class Refused(Exception):
    """A request refused for a reason its sender can act on; the message says why.

    ``status`` is the HTTP status that answers it (400 by default: the request is wrong);
    ``field`` the input the refusal is about, when one is (``""``: the request as a whole).

    >>> e = Refused("that name is taken")
    >>> e.status, e.field, e.headers(), str(e)
    (400, '', {}, 'that name is taken')
    """

    status: ClassVar[int] = 400
    field: str = ""

    def headers(self) -> dict[str, str]:
        """HTTP headers the answer carries besides its status (none by default)."""
        return {}
