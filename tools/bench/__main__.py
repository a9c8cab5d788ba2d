"""``python -m tools.bench NAME [OPTIONS]`` (``./dev bench NAME``): run one benchmark.

  arena     games per minute through the full path against the bare referee (``games``),
            page times (``pages``) and the rating recomputation (``ratings``)
  ladder    the arena's overhead per game at the ladder's time control with the built-in
            bots, games per minute, and the worker's processes and memory
  remote    one remote worker's CPU, memory, threads and database load while many remote
            bots think
  data      fill a scratch database with synthetic bots and matches, for ``arena pages`` and
            ``arena ratings``
  referee   the referee's own cost per action, and games per minute with and without the
            sandbox
  push      how far behind a live game a watching browser is (its page's event stream)
  startup   the CPU a Python bot spends from its start until it says ``ready``
  sandbox   what starting, stopping and freezing a sandboxed bot costs

``./dev bench NAME --help`` lists a benchmark's options; docs/benchmarks.md says how each is run.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from tools import ToolError, setup_django

#: Each benchmark's module (its ``main(argv) -> int``), and whether it needs the arena's
#: Django project set up before the module is loaded (it imports the arena's models).
BENCHMARKS: dict[str, tuple[str, bool]] = {
    "arena": ("tools.bench.arena", True),
    "ladder": ("tools.bench.ladder", True),
    "data": ("tools.bench.data", True),
    "push": ("tools.bench.push", True),
    "remote": ("tools.bench.remote", True),
    "referee": ("tools.bench.referee", False),
    "startup": ("tools.bench.startup", False),
    "sandbox": ("tools.bench.sandbox", False),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark the first argument names with the rest of the arguments; its exit
    status (2 and the list of benchmarks when none is named)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in BENCHMARKS:
        asked_for_help = bool(args) and args[0] in ("-h", "--help")
        print(__doc__, file=sys.stdout if asked_for_help else sys.stderr)
        return 0 if asked_for_help else 2
    module, needs_django = BENCHMARKS[args[0]]
    if needs_django:
        setup_django()
    try:
        status: int = importlib.import_module(module).main(args[1:])
    except ToolError as e:
        print(f"bench {args[0]}: {e}", file=sys.stderr)
        return 1
    return status


if __name__ == "__main__":
    sys.exit(main())
