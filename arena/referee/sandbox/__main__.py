"""``python -m arena.referee.sandbox probe``: what protection this host offers, and why."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from arena.referee.sandbox.host import probe


def main(args: Sequence[str] | None = None) -> int:
    """``python -m arena.referee.sandbox probe``."""
    parser = argparse.ArgumentParser(prog="python -m arena.referee.sandbox")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("probe", help="print what protection this host offers")
    parser.parse_args(args)
    report = probe()
    print(f"level: {report.level.value}")
    for line in report.details:
        print(f"  - {line}")
    print()
    print(report.describe())
    return 0


if __name__ == "__main__":
    sys.exit(main())
