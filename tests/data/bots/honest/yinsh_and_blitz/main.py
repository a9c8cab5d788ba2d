"""An honest bot that plays YINSH and Blitz only: a random legal action, seeded by the game's
seed; in Yangsh it writes why to stderr and exits before it is ready."""

import random
import sys

import yinshbot

_rng = random.Random()


def start(hello):
    if hello.variant not in ("yinsh", "blitz"):
        print(f"yinsh_and_blitz: {hello.variant} is not implemented", file=sys.stderr, flush=True)
        sys.exit(2)
    _rng.seed(f"{hello.seed}/{hello.color}")


def choose(request):
    return _rng.choice(request.actions)


if __name__ == "__main__":
    yinshbot.main(choose, on_start=start)
