"""An honest bot that keeps a diary: each action it plays, it writes a marker (and its working
folder) to standard error and the same marker in its ``info``. The marker must reach its
owner's match page and nobody else's (tests/arena/web/test_privacy.py)."""

import os
import sys

import yinshbot

MARKER = "DIARY-MARKER-5e2b"

print(f"{MARKER} starting in {os.getcwd()}", file=sys.stderr, flush=True)


def choose(request: yinshbot.Request) -> tuple[str, dict[str, object]]:
    action = request.actions[0]
    print(f"{MARKER} plays {action} from {os.getcwd()}", file=sys.stderr, flush=True)
    return action, {"note": MARKER, "folder": os.getcwd()}


if __name__ == "__main__":
    yinshbot.main(choose)
