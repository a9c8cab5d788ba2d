"""A complete YINSH bot in Python, standard library only.

The referee writes one JSON object per line to our standard input and reads one JSON object
per line from our standard output (docs/protocol.md). Standard error is our log: the referee
keeps its end in the game's transcript, so print to stderr as much as you like, but never
print anything but protocol lines to stdout.

Run it against the random bot, in the arena's folder:

    .venv/bin/python manage.py match bots/starters/python bots/random
"""

import json
import random
import sys

NAME = "starter-python"
VERSION = "1.0"


def log(*args):
    """Write a line to the log (standard error), never to standard output."""
    print(NAME + ":", *args, file=sys.stderr, flush=True)


def send(message):
    """Write one message as one line of JSON, and flush it at once: the referee is waiting."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def choose(actions, rng):
    """The strategy: pick one of the legal action tokens. Make this smarter!

    The request also carries "history", "position" and "clock" (see docs/protocol.md).
    """
    return rng.choice(actions)


def main():
    rng = random.Random()
    for line in sys.stdin:  # one message per line, until the referee closes our input
        message = json.loads(line)
        kind = message["type"]
        if kind == "hello":
            # Seed from the game's seed and our colour: the same game replays the same way.
            rng.seed(f"{message['seed']}/{message['color']}")
            log("playing", message["color"], "in", message["variant"])
            send({"type": "ready", "name": NAME, "version": VERSION})
        elif kind == "request":
            send({"type": "action", "action": choose(message["actions"], rng)})
        elif kind == "end":
            log("game over:", message["result"], "-", message["reason"])
            break
        # Any other type is from a later protocol version: ignore it.


if __name__ == "__main__":
    main()
