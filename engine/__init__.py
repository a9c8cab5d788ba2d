"""YINSH, Blitz YINSH and Yangsh: the rules, the official notation and game records.

    >>> import engine
    >>> s = engine.State("yinsh")
    >>> for token in "e3 a5 b5 c6 d6 e4 h7 g2 g3 g8".split():
    ...     _ = s.play(token)
    >>> s.next.value, len(s.legal_actions())
    ('move', 86)

The package uses the standard library only.
"""

from engine.actions import PASS, Action, IllegalAction, InvalidAction, Kind, point_key
from engine.geometry import HEX, ROW, SQUARE8, Board, Geometry, geometry
from engine.notation import (
    Moves,
    NotationError,
    play_turn,
    read_moves,
    replay,
    split_turns,
    write_moves,
)
from engine.record import Record, RecordError, read_records, write_records
from engine.state import (
    Color,
    Ending,
    Forfeit,
    Outcome,
    Phase,
    Result,
    State,
    Termination,
    ending,
    perft,
)
from engine.variants import VARIANTS, Variant, variant

__all__ = [
    "HEX",
    "PASS",
    "ROW",
    "SQUARE8",
    "VARIANTS",
    "Action",
    "Board",
    "Color",
    "Ending",
    "Forfeit",
    "Geometry",
    "IllegalAction",
    "InvalidAction",
    "Kind",
    "Moves",
    "NotationError",
    "Outcome",
    "Phase",
    "Record",
    "RecordError",
    "Result",
    "State",
    "Termination",
    "Variant",
    "ending",
    "geometry",
    "perft",
    "play_turn",
    "point_key",
    "read_moves",
    "read_records",
    "replay",
    "split_turns",
    "variant",
    "write_moves",
    "write_records",
]
