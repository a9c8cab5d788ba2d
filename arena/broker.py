"""The embedded broker: kombu's SQLAlchemy transport, tuned for a local SQLite file.

kombu's virtual transports sleep ``polling_interval`` (1 s) whenever they cannot take a message,
which includes the whole time a worker process is busy with its one prefetched task: with
games that last a fraction of a second, that sleep would dominate. The SQLAlchemy transport
hands all its transport options to ``create_engine``, so neither the interval nor SQLite's
pragmas can be given as options; these subclasses set them. The broker file gets the same
write-ahead log as the arena's database, so that taking a message does not wait for a full
disk flush (a message lost in a power cut is sent again by the sweeper). :mod:`arena.celery`
maps the ``sqla`` scheme of ``sqla+sqlite:///...`` broker URLs to :class:`Transport`.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import sqlalchemy
from sqlalchemy import event

#: Seconds between two looks at the message table when there is nothing to take.
POLLING_INTERVAL = 0.02


class Channel(sqlalchemy.Channel):
    def _engine_from_config(self) -> Any:
        engine = super()._engine_from_config()
        if engine.dialect.name == "sqlite":

            @event.listens_for(engine, "connect")
            def _pragmas(connection: Any, record: Any) -> None:
                cursor = connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.execute("PRAGMA busy_timeout=30000")
                cursor.close()

        return engine


class Transport(sqlalchemy.Transport):
    Channel = Channel
    polling_interval = POLLING_INTERVAL
