"""``python -m arena.referee.sandbox probe|bench``: what this host offers, and what it costs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from arena.referee.sandbox.bench import bench
from arena.referee.sandbox.host import probe


def main(args: Sequence[str] | None = None) -> int:
    """``python -m arena.referee.sandbox probe|bench``."""
    parser = argparse.ArgumentParser(prog="python -m arena.referee.sandbox")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("probe", help="print what protection this host offers")
    bench_parser = commands.add_parser("bench", help="measure start-up and pause/resume costs")
    bench_parser.add_argument("--runs", type=int, default=30)
    bench_parser.add_argument("--state-dir", default=None, help="default: a temporary directory")
    options = parser.parse_args(args)
    if options.command == "probe":
        report = probe()
        print(f"level: {report.level.value}")
        for line in report.details:
            print(f"  - {line}")
        print()
        print(report.describe())
        return 0
    bench(options.runs, options.state_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
