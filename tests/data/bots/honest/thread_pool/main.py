"""An honest bot with a pool of 64 threads, as a program sized for a big machine has.

At start-up every thread of the pool is made to exist at once (each waits at a barrier until
all have arrived); then each action (the first legal one) is found by a thread of the pool. At
the end a JSON line on standard error says how many threads ran.
"""

from __future__ import annotations

import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import yinshbot

THREADS = 64
pool = ThreadPoolExecutor(THREADS)
seen: dict[str, int] = {}


def arrive(barrier: threading.Barrier) -> int:
    barrier.wait(timeout=30)
    return threading.get_ident()


def start(hello: yinshbot.Hello) -> None:
    if seen:
        return
    barrier = threading.Barrier(THREADS)
    seen["threads at once"] = len(set(pool.map(arrive, [barrier] * THREADS)))
    seen["alive"] = threading.active_count()


def choose(request: yinshbot.Request) -> str:
    return pool.submit(lambda: request.actions[0]).result()


def report(result: str, reason: str) -> None:
    print(json.dumps({"act": "thread_pool", **seen}), file=sys.stderr, flush=True)


if __name__ == "__main__":
    yinshbot.main(choose, on_start=start, on_end=report)
