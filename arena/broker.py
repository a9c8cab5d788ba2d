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

from queue import Empty
from time import monotonic, sleep

from kombu import Connection
from kombu.transport import sqlalchemy
from sqlalchemy import Engine, event
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.pool import ConnectionPoolEntry

#: Seconds between two looks at the message table when it held nothing to take.
POLLING_INTERVAL = 0.02
#: Seconds between two looks while every channel already holds all the unacknowledged
#: messages it may (prefetch 1 with acks_late: the task is still running). No query is made
#: then, so looking often is cheap, and the next task is taken as soon as this one is done.
BUSY_INTERVAL = 0.002


class Channel(sqlalchemy.Channel):
    def _engine_from_config(self) -> Engine:
        engine = super()._engine_from_config()
        if engine.dialect.name == "sqlite":

            @event.listens_for(engine, "connect")
            def _pragmas(connection: DBAPIConnection, record: ConnectionPoolEntry) -> None:
                cursor = connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
                cursor.execute("PRAGMA busy_timeout=30000")
                cursor.close()

        return engine


class Transport(sqlalchemy.Transport):
    Channel = Channel
    polling_interval = POLLING_INTERVAL

    def drain_events(  # type: ignore[override]  # as kombu's virtual Transport narrows it
        self, connection: Connection, timeout: float | None = None
    ) -> None:
        """kombu's loop, but with a short sleep while the worker is busy (see BUSY_INTERVAL)."""
        cycle, channels = self.cycle, self.channels
        # Both are made with the transport, before any event is drained.
        assert cycle is not None and channels is not None
        start = monotonic()
        while True:
            try:
                cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                if timeout is not None and monotonic() - start >= timeout:
                    raise TimeoutError from None
                busy = not any(c._consumers and c.qos.can_consume() for c in channels)
                pause = BUSY_INTERVAL if busy else self.polling_interval
                if timeout is not None:
                    pause = min(pause, max(0.0, timeout - (monotonic() - start)))
                sleep(pause)
