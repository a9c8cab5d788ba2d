"""Who may see a game's logs, and the redacted views every page, API answer and archive shows.

The rule (docs/bots.md, "Logs"): a bot's standard error, its ``info`` and the details of its
failure are its owner's, and the operators' (staff); everyone sees the result and what
happened; nobody sees a server path. :func:`visible_colours` decides who sees what,
:mod:`arena.referee.redaction` (plain Python) does the redaction, and the functions here join
them, so a new page needs one call:

* :func:`transcript_for` (a match's transcript), :func:`reason_for` (a match's reason),
  :func:`version_reason_for` (a rejected version's reason), :func:`check_transcript`
  (a check's failing game, for the version's owner);
* :func:`server_roots`: the server's folders no one may see.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Collection
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User

from arena.bots.models import Bot, BotVersion
from arena.games.models import Match
from arena.referee import redaction
from arena.referee.jsontypes import JSON, JSONObject
from arena.referee.match import SINGLE_FILE_PREFIX
from arena.referee.reasons import without_exit

__all__ = [
    "CheckLogs",
    "Viewer",
    "check_logs",
    "check_transcript",
    "may_see_logs",
    "own_side",
    "reason_for",
    "server_roots",
    "transcript_for",
    "version_reason_for",
    "visible_colours",
]

Viewer = User | AnonymousUser | None

#: The settings that name the server's folders.
_ROOT_SETTINGS = (
    "VAR_DIR",
    "BOT_STORE_DIR",
    "BOT_CACHE_DIR",
    "BOT_BUILD_DIR",
    "SANDBOX_STATE_DIR",
    "MEDIA_ROOT",
    "STATIC_ROOT",
    "BUILTIN_BOTS_DIR",
    "BASE_DIR",
)


def server_roots() -> tuple[str, ...]:
    """The server's folders, as :func:`arena.referee.redaction.strip_paths` takes them: the arena's
    data (``VAR_DIR``, the bot store, cache and builds, the sandbox's state), its code, and the
    referee's folders for single-file bots in the temporary folder (a prefix of names: the
    rest of ``/tmp`` is left alone, since a bot's own ``/tmp`` is in its owner's logs)."""
    roots = [str(getattr(settings, name, "") or "") for name in _ROOT_SETTINGS]
    roots.append(os.path.join(tempfile.gettempdir(), SINGLE_FILE_PREFIX))
    return tuple(r for r in roots if r.startswith("/") and r != "/")


def may_see_logs(user: Viewer, bot: Bot) -> bool:
    """Whether ``user`` may read ``bot``'s logs: its owner, or an operator (staff)."""
    if user is None or not user.is_authenticated:
        return False
    return bool(user.pk == bot.owner_id or user.is_staff or user.is_superuser)


def visible_colours(user: Viewer, match: Match) -> frozenset[str]:
    """The colours of ``match`` whose logs ``user`` may read (``"white"``, ``"black"``)."""
    return frozenset(
        colour
        for colour, version in (("white", match.white), ("black", match.black))
        if may_see_logs(user, version.bot)
    )


def transcript_for(user: Viewer, match: Match, transcript: JSON) -> JSON:
    """``match``'s transcript as ``user`` may read it (see
    :func:`arena.referee.redaction.redact`)."""
    return redaction.redact(transcript, visible_colours(user, match), server_roots())


def reason_for(user: Viewer, match: Match) -> str:
    """What ended ``match`` as ``user`` may read it: in full (``match.detail``, less the
    server's paths) for whoever may read the logs of the colour at fault (both colours when
    neither or both failed), else the public words of what happened (``match.reason``; a
    reason stored before the two were kept apart loses the standard error it quotes)."""
    visible = visible_colours(user, match)
    quoted = {match.fault} if match.fault else set(redaction.COLOURS)
    if quoted <= visible:
        return redaction.strip_paths(match.detail or match.reason, server_roots())
    return redaction.public_text(match.reason, server_roots())


def version_reason_for(user: Viewer, version: BotVersion) -> str:
    """A version's ``reason`` (why it was rejected) as ``user`` may read it: whole for its
    owner and the operators, the public words for everyone else (a failed build's without
    how its command ended: "the build command failed", not its exit code)."""
    if may_see_logs(user, version.bot):
        return redaction.strip_paths(version.reason, server_roots())
    public = redaction.public_text(version.reason, server_roots())
    return without_exit(public) if version.build_failed else public


@dataclass(frozen=True)
class CheckLogs:
    """What a version's owner reads of its check: the report lines and the end of the bot's
    standard error (or of its build's output), without the server's paths."""

    lines: list[str]
    stderr_tail: str


def check_logs(version: BotVersion) -> CheckLogs:
    """The version's check report and stderr tail for its owner (ask :func:`may_see_logs`
    first: nobody else may read them)."""
    roots = server_roots()
    return CheckLogs(
        [redaction.strip_paths(str(line), roots) for line in version.report or []],
        redaction.strip_paths(version.stderr_tail, roots),
    )


def check_transcript(transcript: JSON, visible: Collection[str] = redaction.COLOURS) -> JSON:
    """A check's failing game, for the version's owner: the ``visible`` colours' logs (the
    version's own; both, for one stored before the check kept only its own side), no server
    path."""
    return redaction.redact(transcript, visible, server_roots())


def own_side(transcript: JSONObject, digest: str) -> JSONObject:
    """A check's game kept for a version's owner: only the logs of the colours the version
    played (the players whose ``digest`` is the version's), no server path."""
    players = transcript.get("players")
    mine = [
        colour
        for colour in redaction.COLOURS
        if isinstance(players, dict)
        and isinstance(players.get(colour), dict)
        and players[colour].get("digest") == digest  # type: ignore[union-attr]  # checked above
    ]
    redacted = check_transcript(transcript, mine or redaction.COLOURS)
    assert isinstance(redacted, dict)
    return redacted
