"""``python -m tools.chaos [OPTIONS]`` (``./dev chaos``): the chaos run (:mod:`tools.chaos.run`).

Exit status 0 when every target was met, 1 when one was missed or the run could not go on.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from tools import ToolError, setup_django


def main(argv: Sequence[str] | None = None) -> int:
    setup_django()
    # The run imports the arena's models, which need Django set up first (as in manage.py).
    from tools.chaos import run

    try:
        run.main(argv)
    except ToolError as e:
        print(f"chaos: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
