"""The runtimes every worker offers bots: languages, their commands, versions and starter kits.

A bot runs in the sandbox with the host's ``/usr`` mounted read-only and ``PATH`` set to
:data:`~arena.referee.sandbox.settings.BOT_PATH`, so what a bot can use is what Debian's
packages installed there. :data:`RUNTIMES` lists the documented set (docs/runtimes.md); each
entry names the commands whose versions it reports, the Debian packages that provide them, the
oldest version the arena promises and what bots may use from it, and its starter kit,
``bots/starters/<key>/``.

:func:`probe` runs each version command (with a timeout, on the bots' ``PATH``) and reads the
first version line of its output; a command that is not there is "not installed", and one
older than its runtime's :attr:`~Runtime.minimum` is reported as too old.
:func:`kit_archive` packs a starter kit as a zip whose bytes depend on its files only.

Pure Python: no Django. ``manage.py runtimes`` and the site's runtimes page use it.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import zipfile
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.referee.library import ROOT
from arena.referee.sandbox.settings import BOT_PATH

__all__ = [
    "RUNTIMES",
    "STARTERS",
    "Runtime",
    "RuntimeReport",
    "ToolVersion",
    "by_key",
    "kit_archive",
    "kit_files",
    "parse_version",
    "probe",
    "probe_tool",
    "version_key",
]

#: The starter kits' folder: one bot per runtime, ``bots/starters/<key>/``.
STARTERS = ROOT / "bots" / "starters"

#: Seconds a version command may take (a cold JVM can be slow on a busy host).
PROBE_TIMEOUT = 20.0


@dataclass(frozen=True)
class Runtime:
    """A language bots may be written in, as a worker offers it.

    Attributes:
        key: a short name, the starter kit's folder and the site's URLs use it (``cpp``).
        name: the runtime as people call it (``Node.js``).
        language: the language (``JavaScript``).
        tools: the commands whose versions are reported, e.g. ``("java", "-version")``; the
            first word is looked up on the bots' ``PATH``.
        packages: the Debian packages that install the tools.
        outputs: what the starter kit's build makes in its folder (left out of the kit's
            archive if a local build left them there).
        minimum: the oldest version of every tool the arena promises (``1.85``): what
            :attr:`features` says holds from it on; an older tool is reported as too old.
        features: what bots may use, in a few words (language level, lock files, limits).
    """

    key: str
    name: str
    language: str
    tools: tuple[tuple[str, ...], ...]
    packages: tuple[str, ...]
    outputs: tuple[str, ...] = ()
    minimum: str = ""
    features: str = ""

    @property
    def kit(self) -> Path:
        """The starter kit's folder."""
        return STARTERS / self.key

    @property
    def commands(self) -> tuple[str, ...]:
        """The tools' program names (``java``, ``javac``)."""
        return tuple(tool[0] for tool in self.tools)

    def is_current(self, version: str) -> bool:
        """Whether a tool's ``version`` is :attr:`minimum` or later (any, without a minimum).

        >>> by_key("rust").is_current("1.96.0"), by_key("rust").is_current("1.63.0")
        (True, False)
        >>> by_key("java").is_current("17.0.15")
        True
        """
        return not self.minimum or version_key(version) >= version_key(self.minimum)


def version_key(version: str) -> tuple[int, ...]:
    """A version's numbers, to compare versions with: ``1.85`` < ``1.96.0`` < ``17``.

    >>> version_key("1.85"), version_key("17.0.15+6")
    ((1, 85), (17, 0, 15, 6))
    """
    return tuple(int(n) for n in re.findall(r"\d+", version))


# The newest of each language that Debian 12 packages (docs/runtimes.md): for Rust that is
# rustc-web and cargo-web, which replace the release's rustc 1.63 and cargo and install the
# same commands in /usr/bin; Go, Java and Node.js have no newer package there.
RUNTIMES: tuple[Runtime, ...] = (
    Runtime(
        "python",
        "Python 3",
        "Python",
        (("python3", "--version"),),
        ("python3",),
        minimum="3.11",
        features="match statements, tomllib; the standard library only (no pip packages)",
    ),
    Runtime(
        "javascript",
        "Node.js",
        "JavaScript",
        (("node", "--version"),),
        ("nodejs",),
        minimum="18",
        features="ES2022 (class fields, Array.prototype.at, findLast); no npm packages",
    ),
    Runtime(
        "java",
        "Java (OpenJDK)",
        "Java",
        (("java", "-version"), ("javac", "-version")),
        ("openjdk-17-jdk-headless",),
        ("out",),
        minimum="17",
        features="records, sealed classes, switch expressions, text blocks; no pattern "
        "matching in switch (21)",
    ),
    Runtime(
        "c",
        "GCC",
        "C",
        (("gcc", "--version"),),
        ("gcc", "libc6-dev"),
        ("bot",),
        minimum="12",
        features="C17 by default, POSIX",
    ),
    Runtime(
        "cpp",
        "GCC",
        "C++",
        (("g++", "--version"),),
        ("g++", "libc6-dev"),
        ("bot",),
        minimum="12",
        features="C++17 by default, C++20 with -std=c++20 (no <format>: GCC 13)",
    ),
    Runtime(
        "rust",
        "Rust",
        "Rust",
        (("rustc", "--version"), ("cargo", "--version")),
        ("rustc-web", "cargo-web"),
        ("target", "Cargo.lock"),
        minimum="1.85",
        features="editions 2015 to 2024, let ... else, Cargo.lock versions 3 and 4; no "
        "crates (builds are offline)",
    ),
    Runtime(
        "go",
        "Go",
        "Go",
        (("go", "version"),),
        ("golang-go",),
        ("bot",),
        minimum="1.19",
        features="generics; go.mod's go line 1.19 at most; no min/max built-ins (1.21), no "
        "range over integers (1.22)",
    ),
)


def by_key(key: str) -> Runtime:
    """The runtime called ``key``; :class:`KeyError` if there is none."""
    for runtime in RUNTIMES:
        if runtime.key == key:
            return runtime
    raise KeyError(key)


# ----------------------------------------------------------------------------- versions

# A version in quotes (``openjdk version "17.0.15"``), else a dotted number (``go1.19.8``,
# ``v20.20.2``, ``Python 3.11.2``), else a lone number.
_QUOTED = re.compile(r'"(\d[^"\s]*)"')
_DOTTED = re.compile(r"(?<![\w.])(?:v|go)?(\d+(?:\.\d+)+)")
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")


def parse_version(output: str) -> tuple[str, str] | None:
    """The version a ``--version`` output reports, and the line it is on; None if none.

    The line is the first that holds a version (a JVM may print ``Picked up ...`` first).

    >>> parse_version("gcc (Debian 12.2.0-14+deb12u1) 12.2.0\\nCopyright (C) 2022 ...")
    ('12.2.0', 'gcc (Debian 12.2.0-14+deb12u1) 12.2.0')
    >>> parse_version('openjdk version "17.0.15" 2025-04-15\\nOpenJDK Runtime Environment')[0]
    '17.0.15'
    >>> parse_version("go version go1.19.8 linux/amd64")[0]
    '1.19.8'
    >>> parse_version("no digits here") is None
    True
    """
    for raw in output.splitlines():
        line = raw.strip()
        if not line or line.startswith("Picked up "):
            continue
        for pattern in (_QUOTED, _DOTTED, _NUMBER):
            m = pattern.search(line)
            if m:
                return m.group(1), line
    return None


@dataclass(frozen=True)
class ToolVersion:
    """What one version command said.

    Attributes:
        command: the command as run, e.g. ``java -version``.
        path: where the program was found on the bots' ``PATH``; empty if not found.
        version: the version (``17.0.15``); empty when the tool is missing or failed.
        line: the version line, or why there is no version (``not installed``, ``timed out``).
    """

    command: str
    path: str
    version: str
    line: str

    @property
    def ok(self) -> bool:
        return bool(self.version)

    def to_json(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "path": self.path,
            "version": self.version,
            "line": self.line,
        }


@dataclass(frozen=True)
class RuntimeReport:
    """A runtime and the versions its tools reported on this host."""

    runtime: Runtime
    tools: tuple[ToolVersion, ...]

    @property
    def ok(self) -> bool:
        """Whether every tool of the runtime answered with a version, none older than the
        runtime's :attr:`~Runtime.minimum`."""
        return all(t.ok for t in self.tools) and not self.too_old

    @property
    def too_old(self) -> tuple[ToolVersion, ...]:
        """The tools that answered with a version older than the runtime's minimum."""
        return tuple(t for t in self.tools if t.ok and not self.runtime.is_current(t.version))

    @property
    def version(self) -> str:
        """The first tool's version (the runtime's, e.g. the JVM's), or ``not installed``."""
        first = self.tools[0]
        return first.version or first.line

    def to_json(self) -> dict[str, Any]:
        r = self.runtime
        return {
            "key": r.key,
            "name": r.name,
            "language": r.language,
            "ok": self.ok,
            "version": self.version,
            "minimum": r.minimum,
            "features": r.features,
            "packages": list(r.packages),
            "kit": f"bots/starters/{r.key}",
            "tools": [{**t.to_json(), "too_old": t in self.too_old} for t in self.tools],
        }


NOT_INSTALLED = "not installed"


def probe_tool(
    tool: Sequence[str], *, path: str = BOT_PATH, timeout: float = PROBE_TIMEOUT
) -> ToolVersion:
    """Run one version command on ``path`` and read its version.

    The command runs with a small fixed environment (``PATH``, ``HOME=/tmp``, ``LC_ALL=C``), as
    a bot's would, and its standard output and error are read together (``java -version``
    writes to standard error).
    """
    command = " ".join(tool)
    program = shutil.which(tool[0], path=path)
    if program is None:
        return ToolVersion(command, "", "", NOT_INSTALLED)
    env = {"PATH": path, "HOME": "/tmp", "LC_ALL": "C"}
    try:
        with subprocess.Popen(
            [program, *tool[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group, stopped whole on a timeout
        ) as process:
            try:
                raw, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.communicate()
                return ToolVersion(command, program, "", f"timed out after {timeout:g} s")
    except OSError as e:
        return ToolVersion(command, program, "", f"cannot run: {e.strerror or e}")
    output = raw.decode("utf-8", "replace")
    found = parse_version(output)
    if process.returncode != 0 or found is None:
        last = output.strip().splitlines()[-1:] or [""]
        code = process.returncode
        why = f"exit code {code}" if code != 0 else "no version in its output"
        return ToolVersion(command, program, "", f"{why}: {last[0][:200]}".rstrip(": "))
    version, line = found
    return ToolVersion(command, program, version, line[:200])


def probe(
    runtimes: Iterable[Runtime] = RUNTIMES,
    *,
    path: str = BOT_PATH,
    timeout: float = PROBE_TIMEOUT,
) -> list[RuntimeReport]:
    """Each runtime with the versions of its tools on this host (a few commands at once)."""
    chosen = list(runtimes)
    tools = [tool for runtime in chosen for tool in runtime.tools]
    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = iter(list(pool.map(lambda t: probe_tool(t, path=path, timeout=timeout), tools)))
    return [RuntimeReport(r, tuple(next(answers) for _ in r.tools)) for r in chosen]


# ----------------------------------------------------------------------------- starter kits

_SKIPPED = frozenset({"__pycache__"})
#: Zip entries carry a date; this fixed one makes the archive depend on the files only.
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


def kit_files(runtime: Runtime, folder: Path | None = None) -> list[str]:
    """The starter kit's files (relative names, sorted): its sources and ``bot.toml``.

    Symbolic links, hidden files and folders, ``__pycache__`` and what the kit's build makes
    (:attr:`Runtime.outputs`) are left out. ``folder`` is the kit's, :attr:`Runtime.kit`, unless
    given.
    """
    folder = runtime.kit if folder is None else folder
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        base = Path(dirpath)
        top = base == folder
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not d.startswith(".")
            and d not in _SKIPPED
            and not (top and d in runtime.outputs)
            and not (base / d).is_symlink()
        )
        for name in filenames:
            p = base / name
            if name.startswith(".") or (top and name in runtime.outputs):
                continue
            if p.is_symlink() or not p.is_file():
                continue
            found.append(p.relative_to(folder).as_posix())
    return sorted(found)


def kit_archive(runtime: Runtime, folder: Path | None = None) -> tuple[str, bytes]:
    """The starter kit as a zip: its file name and bytes.

    The files (:func:`kit_files`) sit in one folder, ``yinsh-starter-<key>/``, so the archive
    unpacks tidily and can be uploaded as it is. Entries are sorted and dated 1980-01-01, so the
    same files always give the same bytes.
    """
    folder = runtime.kit if folder is None else folder
    top = f"yinsh-starter-{runtime.key}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in kit_files(runtime, folder):
            info = zipfile.ZipInfo(f"{top}/{rel}", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o100644 << 16  # a regular file, rw-r--r--
            info.create_system = 3  # Unix, so that the mode above is read
            zf.writestr(info, (folder / rel).read_bytes())
    return f"{top}.zip", buf.getvalue()
