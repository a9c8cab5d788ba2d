"""``python -m tools.hosts [OPTIONS]`` (``./dev hosts``): the run on several hosts
(:mod:`tools.hosts.run`).

Exit status 0 when every check passed and every target was met, 1 otherwise.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tools import ToolError, setup_django


def main(argv: Sequence[str] | None = None) -> int:
    setup_django()
    # The run imports the arena's models, which need Django set up first (as in manage.py).
    from tools.hosts import run

    try:
        run.main(argv)
    except ToolError as e:
        print(f"hosts: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
