"""An honest bot that thinks in worker processes, the way Python 3.14 starts them on Linux.

A pool with the ``forkserver`` start method (the default from Python 3.14) and a
``multiprocessing.Manager()``: the fork server and the manager talk to their clients over unix
sockets in the temporary folder. A worker of the pool finds each action (the first legal one),
the manager counts them; at the end a JSON line on standard error says how it went.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from typing import Any

import yinshbot

workers: dict[str, Any] = {}


def first_legal(actions: list[str]) -> tuple[str, int]:
    return actions[0], os.getpid()


def start(hello: yinshbot.Hello) -> None:
    if workers:
        return
    context = multiprocessing.get_context("forkserver")
    manager = context.Manager()
    workers.update(manager=manager, pool=context.Pool(2), counts=manager.dict(moves=0), pids=set())


def choose(request: yinshbot.Request) -> str:
    action, pid = workers["pool"].apply(first_legal, (request.actions,))
    workers["pids"].add(pid)
    workers["counts"]["moves"] += 1
    return action


def report(result: str, reason: str) -> None:
    line = {
        "act": "forkserver",
        "start_method": workers["pool"]._ctx.get_start_method(),
        "moves": workers["counts"]["moves"],
        "worker_pids": len(workers["pids"] - {os.getpid()}),
    }
    print(json.dumps(line), file=sys.stderr, flush=True)
    workers["pool"].close()
    workers["pool"].join()
    workers["manager"].shutdown()


if __name__ == "__main__":
    yinshbot.main(choose, on_start=start, on_end=report)
