"""The words of a game's end: a violation in one line, a bot's standard error summed up, text
made safe to store."""

from __future__ import annotations

import re
from typing import Any

from arena.referee.transport import ViolationLike

__all__ = [
    "STDERR_MARK",
    "stderr_summary",
    "storable",
    "violation_text",
    "without_exit",
    "without_stderr",
]

#: How a failure text quotes the bot's standard error: everything from here on is the bot's own
#: words, which only its owner may read (arena.referee.redaction).
STDERR_MARK = "; stderr: "


def without_stderr(reason: str) -> str:
    """A failure text without the bot's words it quotes (:data:`STDERR_MARK` and all after).

    >>> without_stderr("black exited at ply 8 (exit code 3); stderr: boom")
    'black exited at ply 8 (exit code 3)'
    """
    return reason.partition(STDERR_MARK)[0]


#: How a failure text says how a process ended, in brackets (transport.describe_exit's words).
_EXIT = re.compile(r" \((?:exit code -?\d+|killed by signal \d+ \([A-Za-z0-9_]+\))\)")


def without_exit(reason: str) -> str:
    """A failure text without how the process ended (its exit code or signal, in brackets),
    which only the bot's owner may read.

    >>> without_exit("the build failed: the build command failed (exit code 101)")
    'the build failed: the build command failed'
    >>> without_exit("the build command failed (killed by signal 9 (SIGKILL)) twice")
    'the build command failed twice'
    """
    return _EXIT.sub("", reason)


def violation_text(v: ViolationLike) -> str:
    """A violation in words: its message, then its kind in brackets."""
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


#: At most this many lines of a bot's stderr, and this many characters, in a reason.
SUMMARY_LINES = 3
SUMMARY_CHARS = 300

# Lines that name the error: an exception or error class (TypeError, ImportError,
# java.lang.IllegalStateException), a Rust or Go panic, a C++ terminate, "error:" and "fatal".
_ERROR_CLASS = re.compile(r"\b[\w.$]*(?:Error|Exception)\b")
_ERROR_WORDS = re.compile(
    r"\bpanicked at\b|^panic:|^terminate called\b|\berror(?:\[\w+\])?:|^fatal\b", re.IGNORECASE
)
# Lines that say nothing about the error: runtime banners and hints, markers under code.
_NOISE = re.compile(
    r"^(?:Node\.js v\d|note: run with `RUST_BACKTRACE|exit status \d+$|\.\.\. \d+ more$"
    r"|Picked up JAVA_TOOL_OPTIONS:|[~^\s]+$)"
)
_TRACEBACK = "Traceback (most recent call last):"


def stderr_summary(text: str) -> str:
    """The few lines of a bot's standard error that say why it failed, for a one-line reason.

    A Python traceback gives its innermost frame, the code there and the exception; otherwise
    the last line that names an error (an exception or error class, a panic, ``error:``) is
    kept with the line that completes it: the message after a header that ends with a colon
    (Rust), the first stack frame (Node.js, Java), ``what()`` (C++). Runtime banners after it
    (``Node.js v18...``) and hints are skipped. With no such line, the last line that is not
    noise. At most :data:`SUMMARY_LINES` lines, joined by " | ", and at most
    :data:`SUMMARY_CHARS` characters.

    >>> node = "TypeError: x is undefined\\n    at main (/bot/main.js:3:5)\\n\\nNode.js v18.19.0"
    >>> stderr_summary(node)
    'TypeError: x is undefined | at main (/bot/main.js:3:5)'
    >>> stderr_summary("thinking...\\ngiving up\\n")
    'giving up'
    """
    lines = [line.rstrip() for line in text.splitlines()]
    useful = [i for i, line in enumerate(lines) if line.strip() and not _NOISE.match(line.strip())]
    parts = _python_traceback(lines, useful) or _error_lines(lines, useful)
    if not parts and useful:
        parts = [lines[useful[-1]].strip()]
    summary = " | ".join(parts[-SUMMARY_LINES:])
    if len(summary) > SUMMARY_CHARS:
        summary = summary[: SUMMARY_CHARS - 3] + "..."
    return summary


def _python_traceback(lines: list[str], useful: list[int]) -> list[str]:
    headers = [i for i in useful if lines[i].strip() == _TRACEBACK]
    if not headers:
        return []
    after = [i for i in useful if i > headers[-1]]
    exception = next((i for i in after if not lines[i][:1].isspace()), None)
    if exception is None:
        return []
    parts = [lines[exception].strip()]
    frames = [i for i in after if i < exception and lines[i].strip().startswith("File ")]
    if frames:
        code = [i for i in after if frames[-1] < i < exception]
        parts[:0] = [lines[frames[-1]].strip()] + [lines[i].strip() for i in code[:1]]
    return parts


def _error_lines(lines: list[str], useful: list[int]) -> list[str]:
    def names_an_error(line: str) -> bool:
        line = line.strip()
        if line.startswith("at "):
            return False  # a stack frame, whatever its function is called
        return bool(_ERROR_CLASS.search(line) or _ERROR_WORDS.search(line))

    anchors = [i for i in useful if names_an_error(lines[i])]
    if not anchors:
        return []
    anchor = anchors[-1]
    parts = [lines[anchor].strip()]
    following = next((i for i in useful if i > anchor), None)
    if following is not None:
        line = lines[following].strip()
        if parts[0].endswith(":") or line.startswith(("at ", "what():")):
            parts.append(line)
    return parts
