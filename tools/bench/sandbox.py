"""``./dev bench sandbox [--runs 30]``: what starting, stopping and freezing a bot costs.

Launches ``/bin/true`` and ``python3 -c pass`` ``--runs`` times each through a
:class:`~arena.referee.sandbox.core.Sandbox` at the host's best protection level, as the
referee does, and prints the medians: from ``launch()`` until the bot's exit is seen, until
``launch()`` returns, and ``kill()`` with its clean-up; the same programs started without the
sandbox; and ``pause()`` / ``resume()`` of a busy bot (the cgroup freezer). Not privileged
itself beyond what the sandbox needs.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence

from arena.referee.sandbox.core import Sandbox
from arena.referee.sandbox.settings import BOT_PATH, ProtectionLevel, SandboxSettings

__all__ = ["bench", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench sandbox", description="measure start-up and pause/resume costs"
    )
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--state-dir", default=None, help="default: a temporary directory")
    options = parser.parse_args(argv)
    bench(options.runs, options.state_dir)
    return 0


def _median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f} ms"


def _median_and_best_ms(samples: list[float]) -> str:
    return f"{_median_ms(samples)} median, {min(samples) * 1000:.1f} ms best"


def bench(runs: int, state_dir: str | None) -> None:
    """Print start-up, clean-up and pause/resume costs measured over ``runs`` launches."""
    with contextlib.ExitStack() as stack:
        if state_dir is None:
            state_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="yinsh-bench-"))
            os.chmod(state_dir, 0o711)
        bot_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="yinsh-bench-bot-"))
        os.chmod(bot_dir, 0o755)
        sandbox = stack.enter_context(Sandbox(SandboxSettings(state_dir=state_dir)))
        print(f"protection level: {sandbox.level.value}")
        trusted = sandbox.level is not ProtectionLevel.FULL

        def measure(argv: list[str]) -> tuple[list[float], list[float], list[float]]:
            launch, total, cleanup = [], [], []
            for _ in range(runs):
                started = time.perf_counter()
                bot = sandbox.launch(bot_dir, argv, trusted=trusted)
                launched = time.perf_counter()
                status = bot.wait(10)  # wakes on the pidfd the moment bwrap exits
                ended = time.perf_counter()
                bot.kill()
                cleaned = time.perf_counter()
                if status != 0:
                    raise RuntimeError(f"{argv} exited with {status}: {bot.stderr_tail()}")
                launch.append(launched - started)
                total.append(ended - started)
                cleanup.append(cleaned - ended)
            return launch, total, cleanup

        def plain(argv: list[str]) -> list[float]:
            samples = []
            for _ in range(runs):
                started = time.perf_counter()
                subprocess.run(argv, check=True, env={"PATH": BOT_PATH})
                samples.append(time.perf_counter() - started)
            return samples

        for argv in (["/bin/true"], ["python3", "-c", "pass"]):
            measure(argv[:1] if argv[0] == "/bin/true" else argv)  # warm caches
            launch, total, cleanup = measure(argv)
            print(
                f"{' '.join(argv)}: start-to-exit {_median_and_best_ms(total)} "
                f"(launch() returns after {_median_ms(launch)}; kill() and clean-up "
                f"{_median_ms(cleanup)}); unsandboxed {_median_ms(plain(argv))}"
            )
        bot = sandbox.launch(bot_dir, ["/bin/sh", "-c", "while :; do :; done"], trusted=trusted)
        try:
            pauses, resumes = [], []
            for _ in range(max(runs, 20)):
                started = time.perf_counter()
                bot.pause()
                paused = time.perf_counter()
                bot.resume()
                resumed = time.perf_counter()
                pauses.append(paused - started)
                resumes.append(resumed - paused)
            print(f"pause(): {_median_ms(pauses)}; resume(): {_median_ms(resumes)}")
        finally:
            bot.kill()
