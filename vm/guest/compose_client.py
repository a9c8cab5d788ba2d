"""What a bot author does through the REST API, against the compose deployment in the VM.

    python3 compose_client.py URL USERNAME PASSWORD BOT_DIR

Gets a token, uploads BOT_DIR (zipped) as a new bot, waits until the worker has checked it and
it has rated games, and downloads the record of one of them. Prints each step; exits non-zero
at the first one that fails. Standard library only.
"""

from __future__ import annotations

import io
import json
import sys
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from pathlib import Path
from typing import Any

BOT_NAME = "vm-random"
#: Registered by the compose file's ``migrate`` service and checked by the worker.
BUILT_IN_BOTS = ("random", "greedy", "search")
#: Seconds between two looks at what the worker has done.
POLL_S = 10.0


class Api:
    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.token = ""

    def call(
        self, method: str, path: str, body: bytes | None = None, content_type: str = ""
    ) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, data=body, method=method)
        if self.token:
            request.add_header("Authorization", f"Token {self.token}")
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def json(self, method: str, path: str, data: dict[str, Any] | None = None) -> Any:
        body = json.dumps(data).encode() if data is not None else None
        status, text = self.call(method, path, body, "application/json" if body else "")
        if status >= 400:
            raise SystemExit(f"compose: {method} {path} answered {status}: {text[:500]!r}")
        return json.loads(text)


def multipart(fields: dict[str, str], name: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for key, value in fields.items():
        disposition = f'Content-Disposition: form-data; name="{key}"'
        parts.append(f"--{boundary}\r\n{disposition}\r\n\r\n{value}\r\n".encode())
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
        f"Content-Type: application/zip\r\n\r\n".encode()
        + data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def zipped(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def report_built_in_bots(api: Api) -> None:
    """Print the state of the built-in bots' newest versions: the ladder and the new bot's
    qualification games need them active."""
    for name in BUILT_IN_BOTS:
        status, text = api.call("GET", f"/api/bots/{name}/versions/")
        if status != 200:
            print(f"compose:   built-in {name}: the API answered {status}", flush=True)
            continue
        for version in json.loads(text)[:1]:
            reason = f" ({version['reason'][:300]})" if version.get("reason") else ""
            state = f"{version['label']}: {version['status']}{reason}"
            print(f"compose:   built-in {state}", flush=True)


def wait(what: str, seconds: float, probe: Any) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise SystemExit(f"compose: gave up waiting {seconds:.0f} s for {what}")
        time.sleep(POLL_S)


def main(url: str, username: str, password: str, bot_dir: str) -> int:
    api = Api(url)
    api.token = api.json("POST", "/api/token/", {"username": username, "password": password})[
        "token"
    ]
    print("compose: got an API token", flush=True)

    body, content_type = multipart(
        {"name": BOT_NAME, "description": "uploaded in the VM"},
        "file",
        "bot.zip",
        zipped(Path(bot_dir)),
    )
    status, text = api.call("POST", "/api/bots/", body, content_type)
    if status != 201:
        raise SystemExit(f"compose: the upload answered {status}: {text[:500]!r}")
    print(f"compose: uploaded {BOT_NAME} through the API", flush=True)

    def checked() -> dict[str, Any] | None:
        (version, *_) = api.json("GET", f"/api/bots/{BOT_NAME}/versions/")  # newest first
        print(f"compose:   version {version['number']}: {version['status']}", flush=True)
        if version["status"] in ("rejected", "held"):
            raise SystemExit(f"compose: the check did not pass: {json.dumps(version)[:2000]}")
        return version if version["status"] == "active" else None

    version = wait("the check", 1800, checked)
    print(f"compose: checked and active: version {version['id']}", flush=True)
    report_built_in_bots(api)

    def rated() -> list[dict[str, Any]] | None:
        ratings = api.json("GET", f"/api/versions/{version['id']}/")["ratings"]
        games = sum(r["games"] for r in ratings)
        print(f"compose:   rated games so far: {games}", flush=True)
        return ratings if games else None

    try:
        ratings = wait("rated games", 1800, rated)
    except SystemExit:
        report_built_in_bots(api)
        raise
    for rating in ratings:
        print(
            f"compose: rated in {rating['variant']}: {rating['elo']:.0f} "
            f"± {rating['error']:.0f} over {rating['games']} games",
            flush=True,
        )

    matches = api.json("GET", f"/api/matches/?bot={BOT_NAME}&status=finished")["results"]
    if not matches:
        raise SystemExit("compose: no finished match of the bot is listed")
    match = matches[0]
    status, record = api.call("GET", f"/api/matches/{match['id']}/record/")
    text = record.decode()
    if status != 200 or BOT_NAME not in text:
        raise SystemExit(f"compose: the record answered {status}: {text[:500]!r}")
    print(f"compose: downloaded the record of match {match['id']}:", flush=True)
    print("\n".join(f"compose:   {line}" for line in text.splitlines()[:12]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
