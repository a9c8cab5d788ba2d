#!/usr/bin/env python3
r"""The reference client of a remote bot: plays the arena's games with a program on this machine.

    python client.py --server https://arena.example.net --token TOKEN --bot NAME \
        -- COMMAND [ARGS...]

It connects out to the arena (no port to open here), asks for the bot's games (a long poll of
``GET /api/remote/<bot>/events/``), and for each game starts COMMAND, the same program that plays
in the arena's sandbox (any bot folder: ``-- python3 main.py`` in the folder of the example bot
``bots/greedy``). It writes each protocol line the arena sends to the program's standard input,
sends back each line the program writes to its standard output
(``POST .../games/<game>/answer/``), and forwards what it writes to its standard error
(``POST .../games/<game>/log/``), which the bot's owner reads with the game. A program that
exits before its game is over is reported at once, here and in the game's log: its exit status
and the end of its standard error. It plays several games at once (``--games``), and after a
network error tries again, waiting longer each time.
The wire format is in the arena's docs/protocol.md, "Remote bots".

Standard library only; Python 3.11 or later.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

#: Seconds a long poll may wait on the server (it answers sooner when a line comes).
WAIT_S = 25
#: The longest wait between two tries after a network error, seconds.
MAX_BACKOFF_S = 30.0
#: Seconds a program has to exit once its game is over, before it is killed.
EXIT_GRACE_S = 2.0
#: Forward the standard error once this much of it waits (else with the next answer).
LOG_CHUNK = 16 * 1024
#: The end of a program's standard error shown here when it exits before its game is over.
TAIL_LINES = 12
TAIL_CHARS = 4000
#: What a Python program writes when the SDK is not installed on this machine, and the hint.
NO_SDK = ("No module named 'yinshbot'", "No module named 'engine'")
SDK_HINT = (
    "a Python bot using the SDK needs it on this machine: download yinsh-sdk.zip from the "
    "arena's guide, then `unzip yinsh-sdk.zip && python3 -m pip install ./yinsh-sdk` (or "
    "copy its yinshbot/ and engine/ folders next to the bot)"
)


class Refused(Exception):
    """The arena refused a request (4xx): retrying will not help."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status


class Api:
    """The arena's remote-bot API, over HTTP(S), with the bot owner's token."""

    def __init__(self, server: str, token: str, bot: str) -> None:
        self.base = f"{server.rstrip('/')}/api/remote/{urllib.parse.quote(bot)}"
        self.headers = {"Authorization": f"Token {token}", "Accept": "application/json"}

    def request(self, method: str, path: str, body: Any = None, timeout: float = 30) -> Any:
        """One request; raises :class:`Refused` for a 4xx, ``OSError`` for the rest."""
        data = None
        headers = dict(self.headers)
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")[:500]
            if 400 <= e.code < 500:
                raise Refused(e.code, detail) from None
            raise OSError(f"HTTP {e.code}: {detail}") from None
        return json.loads(raw) if raw else None

    def events(self, since: int, wait: int) -> dict[str, Any]:
        query = urllib.parse.urlencode({"since": since, "wait": wait})
        result: dict[str, Any] = self.request("GET", f"/events/?{query}", timeout=wait + 30)
        return result


def retrying(what: Callable[[], Any], stop: threading.Event, log: Callable[[str], None]) -> Any:
    """Call ``what`` until it does not fail with a network error (waiting 1, 2, 4... up to
    :data:`MAX_BACKOFF_S` seconds between tries); None if ``stop`` is set meanwhile."""
    delay = 1.0
    while not stop.is_set():
        try:
            return what()
        except OSError as e:
            log(f"network error ({e}); trying again in {delay:g} s")
            stop.wait(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)
    return None


class Game:
    """One game: its program, the line it answers, and what it wrote to standard error."""

    def __init__(
        self, api: Api, game: dict[str, Any], command: list[str], log: Callable[[str], None]
    ) -> None:
        self.api = api
        self.id = int(game["game"])
        self.name = f"game {self.id} (match {game['match']}, {game['color']})"
        self.log = log
        self.over = threading.Event()
        self.given: set[int] = set()  # the lines written to the program
        self.seq: int | None = None  # the line it answers next
        self.lock = threading.Lock()
        self.stderr: list[str] = []
        self.tail = ""  # the end of its standard error, kept when the rest is forwarded
        self.stopping = False  # the game is over for the client: the program may exit
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
        )
        self.stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.stderr_reader.start()
        threading.Thread(target=self._read_stdout, daemon=True).start()
        log(f"{self.name}: started {command[0]} (pid {self.process.pid})")

    def give(self, seq: int, line: str) -> None:
        """Write the arena's line ``seq`` to the program (once); ``end`` closes its input."""
        if seq in self.given or self.over.is_set():
            return
        self.given.add(seq)
        try:
            kind = json.loads(line).get("type")
        except (ValueError, AttributeError):
            kind = None
        with self.lock:
            self.seq = None if kind == "end" else seq
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the program exited: the arena sees no answer
        if kind == "end":
            self.finish()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.rstrip("\r\n")
            with self.lock:
                seq, self.seq = self.seq, None
            if seq is None:
                self.stderr.append(
                    f"[client] dropped a line written without a request: {line[:200]}\n"
                )
                continue
            self.flush_log()  # what it wrote while thinking goes with its answer
            self._send(f"/games/{self.id}/answer/", {"seq": seq, "line": line})
        if not self.stopping:
            self._died()

    def _died(self) -> None:
        """The program's output ended while its game goes on: say so here at once, with its
        exit status and the end of its standard error, and forward that standard error to
        the game's log (its owner reads it on the game's page)."""
        try:
            code: int | None = self.process.wait(EXIT_GRACE_S)
        except subprocess.TimeoutExpired:
            code = None  # it closed its output but runs on
        self.stderr_reader.join(EXIT_GRACE_S)  # its last words
        with self.lock:
            tail = self.tail
        if self.stopping:
            return  # the game ended meanwhile: nothing went wrong
        if code is None:
            how = "closed its standard output"
        else:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        lines = tail.rstrip("\n").split("\n")[-TAIL_LINES:] if tail.strip() else []
        said = "".join(f"\n    {line}" for line in lines) or "\n    (nothing)"
        hint = f"\n  {SDK_HINT}" if any(n in tail for n in NO_SDK) else ""
        self.log(
            f"{self.name}: the program {how} before its game ended; the end of its standard "
            f"error:{said}{hint}"
        )
        with self.lock:
            self.stderr.append(f"[client] the program {how} before its game ended\n")
        self.flush_log()

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self.lock:
                self.stderr.append(line)
                self.tail = (self.tail + line)[-TAIL_CHARS:]
                size = sum(len(x) for x in self.stderr)
            if size >= LOG_CHUNK:
                self.flush_log()

    def flush_log(self) -> None:
        with self.lock:
            text, self.stderr = "".join(self.stderr), []
        for start in range(0, len(text), LOG_CHUNK):
            self._send(f"/games/{self.id}/log/", {"stderr": text[start : start + LOG_CHUNK]})

    def _send(self, path: str, body: dict[str, Any]) -> None:
        try:
            retrying(lambda: self.api.request("POST", path, body), self.over, self.log)
        except Refused as e:  # the game is over, or the line no longer waits
            self.log(f"{self.name}: the arena refused {path.rsplit('/', 2)[-2]}: {e}")

    def finish(self) -> None:
        """The game is over: let the program exit, then stop it (in a thread of its own).
        Once: every long poll until the program is gone says the game is over again."""
        with self.lock:
            if self.stopping:
                return
            self.stopping = True

        def stop() -> None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
            except (OSError, ValueError):
                pass
            try:
                self.process.wait(EXIT_GRACE_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.flush_log()
            self.over.set()
            self.log(f"{self.name}: over")

        threading.Thread(target=stop, daemon=True).start()


def play(api: Api, command: list[str], games: int, stop: threading.Event) -> None:
    """Ask for work and play it until ``stop`` is set."""

    def log(text: str) -> None:
        print(f"{time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)

    playing: dict[int, Game] = {}
    failed: set[int] = set()  # games whose program could not start
    since = 0
    log(f"asking {api.base}/events/ for games")
    while not stop.is_set():
        got = retrying(lambda since=since: api.events(since, WAIT_S), stop, log)
        if got is None:
            break
        since = int(got.get("cursor", since))
        open_games = {int(g["game"]): g for g in got.get("games", [])}
        for game_id, game in list(playing.items()):
            if game_id not in open_games:
                game.finish()  # the arena let it go (ended or aborted)
            if game.over.is_set():
                del playing[game_id]
        for game_id, entry in open_games.items():
            seq, line = entry.get("seq"), entry.get("line")
            game = playing.get(game_id)
            if game is None:
                if seq is None or game_id in failed or len(playing) >= games:
                    continue
                if json.loads(line).get("type") != "hello":
                    continue  # a game begun elsewhere (a client before this one): not ours
                try:
                    game = playing[game_id] = Game(api, entry, command, log)
                except OSError as e:  # no such program: the game goes unanswered
                    log(f"game {game_id}: could not start {command[0]}: {e}")
                    failed.add(game_id)
                    continue
            if seq is not None:
                game.give(int(seq), line)
    for game in playing.values():
        game.finish()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Play an arena's games with a program on this machine (a remote bot)."
    )
    parser.add_argument("--server", required=True, help="the arena's address (https://...)")
    parser.add_argument(
        "--token",
        default=os.environ.get("ARENA_TOKEN", ""),
        help="your API token (default: $ARENA_TOKEN)",
    )
    parser.add_argument("--bot", required=True, help="the remote bot's name")
    parser.add_argument("--games", type=int, default=4, help="games played at once (default 4)")
    parser.add_argument("command", nargs="+", help="the bot's program and its arguments")
    args = parser.parse_args(argv)
    if not args.token:
        parser.error("give --token (or set ARENA_TOKEN)")
    stop = threading.Event()
    try:
        play(Api(args.server, args.token, args.bot), args.command, max(1, args.games), stop)
    except Refused as e:
        print(f"the arena refused: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        stop.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
