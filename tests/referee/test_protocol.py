"""The protocol codec: every message both ways, and every way a bot's line can be wrong."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.referee.protocol import (
    ActionReply,
    End,
    Hello,
    ProtocolError,
    Ready,
    Request,
    RequestEncoder,
    Resign,
    decode_bot_message,
    decode_referee_message,
    encode,
)


def test_hello_is_one_line_of_json_with_the_documented_fields():
    line = encode(Hello("yinsh", "white", 60000, 1000, seed=123))
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {
        "type": "hello",
        "protocol": 1,
        "variant": "yinsh",
        "color": "white",
        "time": {"initial_ms": 60000, "increment_ms": 1000},
        "seed": 123,
    }


@pytest.mark.parametrize(
    "message",
    [
        Hello("blitz", "black", 1000, 0, seed=7),
        Request(("e5", "a2"), ("c3",), {"pool": 51}, 900, 1000),
        End("draw", "the marker pool ran out"),
    ],
)
def test_referee_messages_read_back_as_written(message):
    assert decode_referee_message(encode(message)) == message


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        (Ready("random", "1.0"), Ready),
        (Ready("x"), Ready),
        (ActionReply("xc2-c6"), ActionReply),
        (ActionReply("e5", {"depth": 3, "score": -1.5, "pv": ["e5", "a2"]}), ActionReply),
    ],
)
def test_bot_messages_read_back_as_written(message, kind):
    assert decode_bot_message(encode(message), expect=kind) == message


@pytest.mark.parametrize("message", [Resign(), Resign({"eval": -12.5, "why": "lost"})])
def test_a_resignation_answers_a_request(message):
    line = encode(message)
    assert json.loads(line) == {
        "type": "resign",
        **({"info": message.info} if message.info else {}),
    }
    assert decode_bot_message(line, expect=ActionReply) == message
    assert decode_bot_message(b'{"type": "resign", "later": 1}', expect=ActionReply) == Resign()


@pytest.mark.parametrize(
    ("line", "expect", "fragment"),
    [
        (b'{"type": "resign"}', Ready, "expected a ready message, got a resign message"),
        (b'{"type": "resign", "info": 3}', ActionReply, '"info" of the resign message must be'),
        (b'{"type": "resign", "info": "x"}', ActionReply, "must be an object, not a string"),
        (b'{"type": "Resign"}', ActionReply, "unknown message type 'Resign'"),
    ],
)
def test_malformed_resignations_are_protocol_errors(line, expect, fragment):
    with pytest.raises(ProtocolError) as e:
        decode_bot_message(line, expect=expect)
    assert fragment in str(e.value)


def test_unknown_extra_fields_are_ignored():
    line = b'{"type": "action", "action": "e5", "later": 1}'
    assert decode_bot_message(line, expect=ActionReply) == ActionReply("e5")


def test_a_line_may_end_with_carriage_return_and_spaces():
    line = b'  {"type": "ready", "name": "a"}  \r'
    assert decode_bot_message(line, expect=Ready) == Ready("a")


@given(
    history=st.lists(st.sampled_from(["e5", "a2-h9", "xc2-c6", "xa5", "pass", 'q"\\'])),
    actions=st.lists(st.text(max_size=5)),
    you=st.integers(0, 10**7),
    other=st.integers(0, 10**7),
)
def test_the_incremental_request_encoder_matches_encode(history, actions, you, other):
    enc = RequestEncoder()
    for token in history:
        enc.append(token)
    position = {"variant": "yinsh", "rings": {"white": ["e5"]}}
    expected = encode(Request(tuple(actions), tuple(history), position, you, other))
    assert enc.encode(actions, position, you, other) == expected


BAD = [
    (b"hello there", "not JSON"),
    (b'{"type": "action", "action": "e5"', "not JSON"),
    (b"[1, 2]", "expected a JSON object, got an array"),
    (b'"e5"', "expected a JSON object, got a string"),
    (b"null", "expected a JSON object, got null"),
    (b"{}", 'no "type"'),
    (b'{"type": 3}', '"type" must be a string'),
    (b'{"type": "move", "action": "e5"}', "unknown message type 'move'"),
    (b'{"type": "ready", "name": "x"}', "expected an action message, got a ready message"),
    (b'{"type": "action"}', 'lacks "action"'),
    (b'{"type": "action", "action": 5}', '"action" of the action message is a number'),
    (b'{"type": "action", "action": null}', '"action" of the action message is null'),
    (b'{"type": "action", "action": ["e5"]}', "is an array"),
    (b'{"type": "action", "action": "e5", "info": 3}', '"info" of the action message must be'),
    (b'{"type": "action", "action": "e5", "x": NaN}', "not JSON"),
    (b'{"type": "action", "action": "\xff"}', "not valid UTF-8 (byte 30"),
    (b"\xc3\x28", "not valid UTF-8"),
    (b"", "an empty line"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
]


@pytest.mark.parametrize(("line", "fragment"), BAD)
def test_malformed_action_lines_are_protocol_errors(line, fragment):
    with pytest.raises(ProtocolError) as e:
        decode_bot_message(line, expect=ActionReply)
    assert fragment in str(e.value)
    assert len(str(e.value)) < 300  # a one-line reason, never the whole line


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b'{"type": "ready"}', 'lacks "name"'),
        (b'{"type": "ready", "name": ""}', "is empty"),
        (b'{"type": "ready", "name": "a", "version": 1}', '"version" of the ready message is'),
        (b'{"type": "ready", "name": "' + b"n" * 101 + b'"}', "at most 100 characters"),
        (b'{"type": "ready", "name": "a\\nb"}', "printable"),
        (b'{"type": "action", "action": "e5"}', "expected a ready message, got an action message"),
    ],
)
def test_malformed_ready_lines_are_protocol_errors(line, fragment):
    with pytest.raises(ProtocolError) as e:
        decode_bot_message(line, expect=Ready)
    assert fragment in str(e.value)


def test_a_boolean_is_not_a_number():
    line = b'{"type": "request", "actions": [], "history": [], "position": {}, '
    line += b'"clock": {"you_ms": true, "opponent_ms": 1}}'
    with pytest.raises(ProtocolError, match="you_ms"):
        decode_referee_message(line)


# --------------------------------------------------------------------------- any input at all

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _message_like():
    """JSON objects that look like bot messages: right and wrong types, fields and values."""
    return st.fixed_dictionaries(
        {
            "type": st.sampled_from(["ready", "action", "resign", "hello", "end", "", "READY"])
            | _JSON
        },
        optional={
            "name": _JSON | st.text(max_size=120),
            "version": _JSON,
            "action": _JSON | st.sampled_from(["e5", "a2-h9", "xc2-c6"]),
            "info": _JSON,
        },
    )


@given(line=st.binary(max_size=300) | st.text(max_size=300).map(str.encode))
def test_any_bytes_from_a_bot_are_a_message_or_a_protocol_error(line):
    for expect in (Ready, ActionReply):
        try:
            message = decode_bot_message(line, expect=expect)
        except ProtocolError as e:
            assert str(e)  # a readable reason, never an empty one
        else:
            assert isinstance(message, (ActionReply, Resign) if expect is ActionReply else Ready)


@given(data=_message_like())
def test_any_json_object_from_a_bot_is_a_message_or_a_protocol_error(data):
    line = json.dumps(data).encode()
    for expect in (Ready, ActionReply):
        try:
            message = decode_bot_message(line, expect=expect)
        except ProtocolError as e:
            assert str(e)
        else:
            assert isinstance(message, (ActionReply, Resign) if expect is ActionReply else Ready)
            if isinstance(message, ActionReply):
                assert isinstance(message.action, str)
            if expect is ActionReply:
                assert message.info is None or isinstance(message.info, dict)
