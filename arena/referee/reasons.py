"""The words of a game's end: a violation in one line, a bot's standard error summed up, text
made safe to store."""

from __future__ import annotations

from typing import Any

from arena.referee.transport import ViolationLike

__all__ = ["last_line", "storable", "violation_text"]


def violation_text(v: ViolationLike) -> str:
    kind = str(v.kind)
    message = v.message or str(v)
    return f"{message} ({kind})" if kind else message


def storable(value: Any) -> Any:
    """``value`` (JSON data) with every NUL character in its strings, keys included, replaced by
    U+FFFD: bots may write anything, and databases such as PostgreSQL refuse NUL in text."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v) for v in value]
    return value


def last_line(text: str, limit: int = 160) -> str:
    for line in reversed(text.splitlines()):
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 3] + "..."
    return ""
