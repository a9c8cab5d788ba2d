"""``./dev bench startup [--runs 100]``: the CPU a Python bot spends before it says ``ready``.

For a bare interpreter (``python3 -c`` with a loop that reads ``hello`` and writes ``ready``)
and for the example bots written with the SDK (``yinshbot``), many times each, interleaved:
start the process, send ``hello``, read ``ready``, then kill it at once (it is blocked reading
its next message, so it spends nothing more) and take its CPU time, user + system, from the
resource usage of the children reaped. Prints the medians and each bot's excess over the bare
interpreter (docs/benchmarks.md gives the target).

Bots run unsandboxed, with the interpreter and environment the sandbox gives them (``PATH``,
``PYTHONPATH``, ``PYTHONDONTWRITEBYTECODE``): the sandbox's own start-up is measured by
``./dev bench sandbox``. The SDK is measured twice, from a copy of it in a temporary folder:
as sources, compiled at every start (what a read-only, never compiled library costs), and
compiled ahead (``compileall``, as the container image does).
"""

from __future__ import annotations

import argparse
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

from arena.referee.library import ROOT
from arena.referee.protocol import Hello, Ready, decode_bot_message, encode
from arena.referee.sandbox.settings import BOT_PATH

__all__ = ["BARE_BOT", "main", "ready_cpu_ms"]

#: The baseline: the least a Python program does to answer ``hello``.
BARE_BOT = textwrap.dedent(
    """\
    import sys
    for line in sys.stdin:
        if '"hello"' in line:
            sys.stdout.write('{"type":"ready","name":"bare","version":"1"}\\n')
            sys.stdout.flush()
    """
)
HELLO = encode(Hello("yinsh", "white", 60_000, 100, seed=1))
BOTS = ("random", "greedy", "search")


def ready_cpu_ms(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> float:
    """CPU milliseconds (user + system) that ``argv`` spends from its start to its ``ready``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(HELLO)
        proc.stdin.flush()
        if not select.select([proc.stdout], [], [], 30)[0]:
            raise RuntimeError(f"{' '.join(argv)}: no answer to hello within 30 s")
        decode_bot_message(proc.stdout.readline(), expect=Ready)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000.0


def _copy_library(into: Path) -> None:
    skip = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "engine", into / "engine", ignore=skip)
    shutil.copytree(ROOT / "bots" / "sdk" / "yinshbot", into / "yinshbot", ignore=skip)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench startup", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--runs", type=int, default=100, help="starts per figure (default 100)")
    parser.add_argument(
        "--python",
        default=shutil.which("python3", path=BOT_PATH) or "python3",
        help="the interpreter (default: python3 on the sandbox's PATH)",
    )
    args = parser.parse_args(argv)
    python = args.python
    version = subprocess.run(
        [python, "-c", "import sys; print(sys.version.split()[0])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="yinsh-startup-") as tmp:
        sources, compiled = Path(tmp) / "sources", Path(tmp) / "compiled"
        _copy_library(sources)
        _copy_library(compiled)
        subprocess.run([python, "-m", "compileall", "-q", str(compiled)], check=True)
        base_env = {"HOME": tmp, "PATH": BOT_PATH, "LANG": "C.UTF-8"}
        base_env |= {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        cases: dict[str, tuple[list[str], Path, dict[str, str]]] = {
            "bare python3 -c": ([python, "-c", BARE_BOT], Path(tmp), base_env)
        }
        for bot in BOTS:
            for label, library in (("SDK as sources", sources), ("SDK compiled", compiled)):
                env = base_env | {"PYTHONPATH": str(library)}
                cases[f"{bot} ({label})"] = ([python, "main.py"], ROOT / "bots" / bot, env)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        for run in range(args.runs + 3):
            for name, (command, cwd, env) in cases.items():
                ms = ready_cpu_ms(command, cwd, env)
                if run >= 3:  # the first runs warm the file cache
                    samples[name].append(ms)
    print(
        f"{python} (Python {version}): CPU time from start to ready, user + system, "
        f"median of {args.runs} starts"
    )
    bare = statistics.median(samples["bare python3 -c"])
    for name, values in samples.items():
        median = statistics.median(values)
        excess = "" if values is samples["bare python3 -c"] else f"  (+{median - bare:.1f} ms)"
        print(f"  {name:<28} {median:6.1f} ms{excess}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
