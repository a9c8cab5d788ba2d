"""The embedded broker (arena.broker): kombu's SQLAlchemy transport, looking for messages every
tenth of a second, with the transport options the settings give it."""

from __future__ import annotations

import pytest
from kombu import Connection, Exchange, Queue

from arena import broker


@pytest.fixture
def connection(tmp_path):
    options = {"connect_args": {"timeout": 30}}  # what the settings give the embedded broker
    url = f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
    with Connection(url, transport_options=options) as conn:
        assert isinstance(conn.transport, broker.Transport)
        assert conn.transport.polling_interval == 0.1
        yield conn


def test_a_published_message_is_delivered_and_an_empty_queue_times_out(connection):
    queue = Queue("q", Exchange("q", type="direct"), routing_key="q")
    got = []
    with connection.Consumer(queue, callbacks=[lambda body, msg: (got.append(body), msg.ack())]):
        with pytest.raises(TimeoutError):
            connection.drain_events(timeout=0.2)
        connection.Producer().publish(
            {"n": 1}, exchange=queue.exchange, routing_key="q", declare=[queue]
        )
        connection.drain_events(timeout=5)
    assert got == [{"n": 1}]


def test_while_the_prefetched_message_is_unacknowledged_nothing_more_is_taken(connection):
    queue = Queue("q", Exchange("q", type="direct"), routing_key="q")
    producer = connection.Producer()
    for n in range(2):
        producer.publish({"n": n}, exchange=queue.exchange, routing_key="q", declare=[queue])
    held = []
    with connection.Consumer(queue, callbacks=[lambda body, msg: held.append(msg)]) as consumer:
        consumer.qos(prefetch_count=1)
        connection.drain_events(timeout=5)
        assert len(held) == 1
        # Busy: the channel may not take another message until this one is acknowledged.
        with pytest.raises(TimeoutError):
            connection.drain_events(timeout=0.2)
        held[0].ack()
        connection.drain_events(timeout=5)
    assert [m.payload for m in held] == [{"n": 0}, {"n": 1}]
