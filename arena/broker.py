"""The embedded broker: kombu's SQLAlchemy transport, looking for messages more often.

kombu's virtual transports look for a message every ``polling_interval`` seconds (1 s) when
none could be taken, which includes the whole time a worker process is busy with its one
prefetched task: between two games a worker would wait half a second on average. Elsewhere the
interval is a transport option, but the SQLAlchemy transport hands every option to SQLAlchemy's
``create_engine``, which refuses it; so it is set here. :mod:`arena.celery` maps the ``sqla``
scheme of ``sqla+sqlite:///...`` broker URLs to :class:`Transport`.
"""

from __future__ import annotations

from kombu.transport import sqlalchemy


class Transport(sqlalchemy.Transport):
    #: Seconds between two looks at the message table when it held nothing to take.
    polling_interval = 0.1
