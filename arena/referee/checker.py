"""The local checker: the conformance check (:mod:`arena.referee.conformance`) from the command
line, with nothing but Python: no database, no settings, no sandbox.

It is the program inside ``checkbot.pyz``, the single file the site's guide offers
(:mod:`arena.referee.bundles` makes it from these very modules)::

    python3 checkbot.pyz path/to/mybot          # a bot folder (with bot.toml), or its bot.toml
    python3 checkbot.pyz path/to/mybot.bin      # a single executable file
    python3 checkbot.pyz -- python3 main.py     # a command, run in the current folder

The bot plays the same games as the arena's check, against the same random bot, and the report
has the same lines. The bot runs as a plain process with the user's rights: it is the user's
own bot, on the user's machine. A bot with a ``build`` is not built here: the user builds it in
its folder first, as the starter kits' notes say. The exit status is 0 when every check
passed, 1 when one failed, 2 when the bot or the arguments cannot be used.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import engine
from arena.referee.bots import BotError, BotSpec
from arena.referee.conformance import CHECK_TIME, check_bot
from arena.referee.game import TimeControl
from arena.referee.library import sandbox_settings
from arena.referee.sandbox import ProtectionLevel, Sandbox

__all__ = ["command_bot", "main"]

#: The least number of games, as the arena's check by default (more to cover every variant).
GAMES = 2


def command_bot(command: Sequence[str], folder: Path) -> BotSpec:
    """A bot given as a command run in ``folder`` (it plays every variant)."""
    if not command:
        raise BotError("no command after --: write it as you would run it, like python3 main.py")
    digest = hashlib.sha256("\0".join(command).encode()).hexdigest()
    return BotSpec(folder, folder.name or "bot", tuple(command), digest, trusted=True)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="checkbot.pyz",
        usage="%(prog)s [options] BOT | %(prog)s [options] -- COMMAND ...",
        description=(
            "Check that a bot speaks the YINSH arena's protocol, as the arena does before it "
            "rates a bot: ready in time with a name, legal answers, whole games against a "
            "random bot in both colours and in every variant it declares, a clean exit after "
            "end. The bot runs as a plain process, with your rights."
        ),
        epilog="Examples: checkbot.pyz mybot/   checkbot.pyz -- python3 main.py",
    )
    p.add_argument("bot", nargs="?", help="a bot folder, its bot.toml, or an executable file")
    p.add_argument("--variant", help="check one variant (default: every variant it declares)")
    p.add_argument("--games", type=int, default=GAMES, help=f"games at least (default {GAMES})")
    p.add_argument(
        "--time",
        default=f"{CHECK_TIME.initial_ms / 1000:g}+{CHECK_TIME.increment_ms / 1000:g}",
        help="clock of the games, seconds+increment",
    )
    return p


def _load(args: argparse.Namespace, argv: Sequence[str]) -> BotSpec:
    if "--" in argv:
        command = list(argv[list(argv).index("--") + 1 :])
        return command_bot(command, Path.cwd())
    if args.bot is None:
        raise BotError("name a bot folder, its bot.toml or an executable file, or -- a command")
    path = Path(args.bot).expanduser()
    if path.name == "bot.toml" and path.is_file():
        path = path.parent
    return BotSpec.load(path, trusted=True)


def main(argv: Sequence[str] | None = None, write: Callable[[str], object] = print) -> int:
    """Run the check as the command line asks, print the report, and return the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    own = argv[: argv.index("--")] if "--" in argv else argv
    args = parser.parse_args(own)
    try:
        spec = _load(args, argv)
        variants = spec.variants
        if args.variant:
            variants = (engine.variant(args.variant).name,)
            spec.require(variants[0])
        clock = TimeControl.parse(args.time)
    except (BotError, ValueError) as e:
        write(f"checkbot: {e}")
        return 2
    if spec.needs_build:
        write(
            f"Build: not run here ({spec.build}); build the bot in its folder first, as the "
            "arena will."
        )
        spec = dataclasses.replace(spec, built=True)
    write("Sandbox: none: the bot runs as a plain process with your rights.")
    write(f"Variants: {', '.join(variants)}")
    with tempfile.TemporaryDirectory(prefix="checkbot-") as state:
        level = ProtectionLevel.NONE
        box = Sandbox(sandbox_settings(level, state_dir=state), level=level, allow_unsandboxed=True)
        try:
            report = check_bot(spec, sandbox=box, variants=variants, games=args.games, time=clock)
        finally:
            box.close()
    for line in report.lines:
        write(line)
    if report.ok:
        return 0
    if report.stderr_tail.strip():
        write("\nThe end of the bot's standard error:")
        write(report.stderr_tail.rstrip()[-2000:])
    write(f"\n{spec.name} does not conform")
    return 1
