"""The referee: plays games between bots, each in a sandbox under a per-move clock, and says who
won and why. Plain Python: it imports neither Django nor Celery.

The public names are here; the modules behind them, one idea each:

* :mod:`~arena.referee.game`: a game's configuration and result (:class:`GameConfig`,
  :class:`TimeControl`, :class:`GameResult`, :class:`Played`);
* :mod:`~arena.referee.match`: the :class:`Referee` and its game loop;
* :mod:`~arena.referee.protocol` (the codec) and :mod:`~arena.referee.transport` (pipes,
  deadlines): the two layers under the loop;
* :mod:`~arena.referee.sandbox`: bubblewrap, seccomp, cgroups and uid slots;
* :mod:`~arena.referee.bots` (what a bot folder declares), :mod:`~arena.referee.build`
  (compiling it), :mod:`~arena.referee.runtimes` (the languages offered);
* :mod:`~arena.referee.outcomes` (how the referee ends a game off the board: the one enum of
  a bot's failures), :mod:`~arena.referee.reasons` and :mod:`~arena.referee.redaction` (the
  words of a failure, and what of them the public may read);
* :mod:`~arena.referee.conformance` (the protocol check of a bot), with
  :mod:`~arena.referee.checker` (the same check from the command line, no sandbox) and
  :mod:`~arena.referee.bundles` (``checkbot.pyz`` and the SDK's zip, made from these modules),
  :mod:`~arena.referee.openings`, :mod:`~arena.referee.schedule` (the round robin),
  :mod:`~arena.referee.formats` (every competition format, round by round, with
  :mod:`~arena.referee.matching` to pair a Swiss round) and :mod:`~arena.referee.tournament`
  (openings, pairings, a local tournament);
* :mod:`~arena.referee.errors`: the one base of the machine's failures.
"""

from arena.referee.bots import BotError, BotSpec
from arena.referee.conformance import CheckReport, check_bot
from arena.referee.errors import InfrastructureError
from arena.referee.game import GameConfig, GameResult, Played, TimeControl
from arena.referee.library import bot_library, sandbox_settings
from arena.referee.match import REFEREE_VERSION, Referee, RefereeError
from arena.referee.openings import opening
from arena.referee.outcomes import COUNTED, Failure

__all__ = [
    "COUNTED",
    "REFEREE_VERSION",
    "BotError",
    "BotSpec",
    "CheckReport",
    "Failure",
    "GameConfig",
    "GameResult",
    "InfrastructureError",
    "Played",
    "Referee",
    "RefereeError",
    "TimeControl",
    "bot_library",
    "check_bot",
    "opening",
    "sandbox_settings",
]
