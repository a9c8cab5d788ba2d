"""The runtimes module: reading versions, probing tools, each runtime's oldest promised version,
the starter kits' files and archives, and the promise that the Dockerfile, the compose test's
base image and ./dev install every runtime it lists."""

from __future__ import annotations

import io
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from arena.referee import runtimes
from arena.referee.bots import BotSpec
from arena.referee.runtimes import RUNTIMES, STARTERS, parse_version, probe, probe_tool

from .games import processes_with_cmdline

ROOT = Path(__file__).resolve().parents[2]

# What the tools printed on Debian 12 (and, for the others, on the same machine with rustup's
# Rust and Temurin's JDK): first the whole output, then the version and its line.
REAL_OUTPUTS = [
    ("Python 3.11.2\n", "3.11.2", "Python 3.11.2"),
    ("v20.20.2\n", "20.20.2", "v20.20.2"),
    (
        'openjdk version "17.0.15" 2025-04-15\n'
        "OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)\n"
        "OpenJDK 64-Bit Server VM (build 17.0.15+6-Debian-1deb12u1, mixed mode, sharing)\n",
        "17.0.15",
        'openjdk version "17.0.15" 2025-04-15',
    ),
    (
        "Picked up JAVA_TOOL_OPTIONS: -Xmx64m\n"
        'openjdk version "17.0.15" 2025-04-15\n'
        "OpenJDK Runtime Environment (build 17.0.15+6-Debian-1deb12u1)\n",
        "17.0.15",
        'openjdk version "17.0.15" 2025-04-15',
    ),
    (
        'openjdk version "25.0.3" 2026-04-21 LTS\n'
        "OpenJDK Runtime Environment Temurin-25.0.3+9 (build 25.0.3+9-LTS)\n",
        "25.0.3",
        'openjdk version "25.0.3" 2026-04-21 LTS',
    ),
    ("javac 17.0.15\n", "17.0.15", "javac 17.0.15"),
    (
        "gcc (Debian 12.2.0-14+deb12u1) 12.2.0\n"
        "Copyright (C) 2022 Free Software Foundation, Inc.\n"
        "This is free software; see the source for copying conditions.  There is NO\n",
        "12.2.0",
        "gcc (Debian 12.2.0-14+deb12u1) 12.2.0",
    ),
    (
        "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\n"
        "Copyright (C) 2022 Free Software Foundation, Inc.\n",
        "12.2.0",
        "g++ (Debian 12.2.0-14+deb12u1) 12.2.0",
    ),
    ("rustc 1.63.0\n", "1.63.0", "rustc 1.63.0"),
    ("rustc 1.95.0 (59807616e 2026-04-14)\n", "1.95.0", "rustc 1.95.0 (59807616e 2026-04-14)"),
    ("cargo 1.65.0\n", "1.65.0", "cargo 1.65.0"),
    ("cargo 1.95.0 (f2d3ce0bd 2026-03-21)\n", "1.95.0", "cargo 1.95.0 (f2d3ce0bd 2026-03-21)"),
    (
        "rustc 1.96.0 (ac68faa20 2026-05-25) (built from a source tarball)\n",
        "1.96.0",
        "rustc 1.96.0 (ac68faa20 2026-05-25) (built from a source tarball)",
    ),
    (
        "cargo 1.96.0 (30a34c682 2026-05-25) (built from a source tarball)\n",
        "1.96.0",
        "cargo 1.96.0 (30a34c682 2026-05-25) (built from a source tarball)",
    ),
    ("go version go1.19.8 linux/amd64\n", "1.19.8", "go version go1.19.8 linux/amd64"),
]


@pytest.mark.parametrize(("output", "version", "line"), REAL_OUTPUTS)
def test_the_version_is_read_from_real_outputs(output: str, version: str, line: str) -> None:
    assert parse_version(output) == (version, line)


def test_a_lone_number_is_a_version_and_no_number_is_none() -> None:
    assert parse_version('openjdk version "25" 2025-09-16\n') == (
        "25",
        'openjdk version "25" 2025-09-16',
    )
    assert parse_version("tool 7\n") == ("7", "tool 7")
    assert parse_version("\n\nusage: tool [options]\n") is None
    assert parse_version("") is None


def fake_tool(folder: Path, name: str, script: str) -> None:
    path = folder / name
    path.write_text("#!/bin/sh\n" + script + "\n")
    path.chmod(0o755)


def test_a_missing_tool_is_not_installed(tmp_path: Path) -> None:
    found = probe_tool(("no-such-compiler", "--version"), path=str(tmp_path))
    assert not found.ok
    assert (found.command, found.path, found.version, found.line) == (
        "no-such-compiler --version",
        "",
        "",
        "not installed",
    )


def test_a_tool_is_run_on_the_given_path_and_read_from_its_standard_error(
    tmp_path: Path,
) -> None:
    fake_tool(tmp_path, "java", 'echo "openjdk version \\"21.0.2\\" 2024-01-16" >&2')
    found = probe_tool(("java", "-version"), path=str(tmp_path))
    assert found.ok
    assert found.path == str(tmp_path / "java")
    assert found.version == "21.0.2"
    assert found.line == 'openjdk version "21.0.2" 2024-01-16'


def test_a_failing_tool_reports_its_exit_code_and_last_words(tmp_path: Path) -> None:
    fake_tool(tmp_path, "cc", 'echo "cc 1.0"; echo "cc: fatal: no license" >&2; exit 3')
    found = probe_tool(("cc", "--version"), path=str(tmp_path))
    assert not found.ok
    assert found.line == "exit code 3: cc: fatal: no license"


def test_a_tool_without_a_version_says_so(tmp_path: Path) -> None:
    fake_tool(tmp_path, "tool", "echo usage: tool FILE")
    assert (
        probe_tool(("tool",), path=str(tmp_path)).line
        == "no version in its output: usage: tool FILE"
    )


def test_a_tool_that_hangs_is_stopped_with_its_children(tmp_path: Path) -> None:
    seconds = f"613.{os.getpid()}"  # this run's own, to be looked for
    fake_tool(tmp_path, "slow", f"/bin/sleep {seconds} & wait")
    found = probe_tool(("slow", "--version"), path=str(tmp_path), timeout=0.5)
    assert found.line == "timed out after 0.5 s"
    assert not processes_with_cmdline(seconds.encode()), "the tool's child survived"


def test_the_probe_finds_python_on_this_host() -> None:
    (python,) = probe([runtimes.by_key("python")])
    assert python.ok, python.tools
    assert re.fullmatch(r"3\.\d+(\.\d+)?", python.version)
    assert python.tools[0].path.startswith(("/usr/", "/bin/"))
    data = python.to_json()
    assert data["key"] == "python" and data["kit"] == "bots/starters/python"
    assert data["tools"][0]["command"] == "python3 --version"


@pytest.mark.parametrize(
    ("key", "version", "current"),
    [
        ("rust", "1.63.0", False),  # Debian 12's rustc: no let-else, no Cargo.lock v4
        ("rust", "1.65.0", False),  # Debian 12's cargo 0.66
        ("rust", "1.85.0", True),  # rustc-web in bookworm
        ("rust", "1.96.0", True),  # rustc-web in bookworm-security
        ("java", "17.0.15", True),
        ("java", "11.0.2", False),
        ("go", "1.19.8", True),
        ("javascript", "20.20.2", True),
        ("javascript", "16.20.2", False),
        ("python", "3.9.2", False),
    ],
)
def test_a_version_older_than_the_runtimes_minimum_is_not_current(
    key: str, version: str, current: bool
) -> None:
    assert runtimes.by_key(key).is_current(version) is current


def test_every_runtime_promises_a_minimum_version_and_says_what_bots_may_use() -> None:
    for runtime in RUNTIMES:
        assert re.fullmatch(r"\d+(\.\d+)*", runtime.minimum), runtime.key
        assert runtime.features, runtime.key
    rust = runtimes.by_key("rust")
    assert rust.minimum == "1.85"
    assert "let ... else" in rust.features and "Cargo.lock versions 3 and 4" in rust.features


def test_an_old_toolchain_is_found_but_reported_too_old(tmp_path: Path) -> None:
    """Debian 12's own rustc and cargo answer, yet the runtime is not what the arena promises."""
    fake_tool(tmp_path, "rustc", 'echo "rustc 1.63.0"')
    fake_tool(tmp_path, "cargo", 'echo "cargo 1.65.0"')
    (report,) = probe([runtimes.by_key("rust")], path=str(tmp_path))
    assert all(tool.ok for tool in report.tools)
    assert not report.ok
    assert [t.command for t in report.too_old] == ["rustc --version", "cargo --version"]
    data = report.to_json()
    assert (data["ok"], data["minimum"]) == (False, "1.85")
    assert [t["too_old"] for t in data["tools"]] == [True, True]
    assert "let ... else" in data["features"]


def test_a_current_toolchain_is_ok(tmp_path: Path) -> None:
    fake_tool(tmp_path, "rustc", 'echo "rustc 1.96.0 (ac68faa20 2026-05-25)"')
    fake_tool(tmp_path, "cargo", 'echo "cargo 1.85.0"')
    (report,) = probe([runtimes.by_key("rust")], path=str(tmp_path))
    assert report.ok and report.too_old == ()
    assert [t["too_old"] for t in report.to_json()["tools"]] == [False, False]


def test_every_runtime_has_a_starter_kit_and_every_kit_a_runtime() -> None:
    kits = sorted(p.name for p in STARTERS.iterdir() if p.is_dir())
    assert kits == sorted(r.key for r in RUNTIMES)
    assert len({r.key for r in RUNTIMES}) == len(RUNTIMES)
    with pytest.raises(KeyError):
        runtimes.by_key("cobol")


@pytest.mark.parametrize("runtime", RUNTIMES, ids=lambda r: r.key)
def test_every_kit_manifest_loads(runtime: runtimes.Runtime) -> None:
    spec = BotSpec.load(runtime.kit)
    assert spec.name == f"starter-{runtime.key}"
    assert spec.version and spec.author and spec.description
    compiled = runtime.key not in ("python", "javascript")
    assert bool(spec.build) == compiled
    assert (runtime.kit / "bot.toml").is_file()


EXPECTED_FILES = {
    "python": ["bot.toml", "main.py"],
    "javascript": ["bot.toml", "main.js"],
    "java": ["Main.java", "bot.toml"],
    "c": ["bot.toml", "main.c"],
    "cpp": ["bot.toml", "main.cpp"],
    "rust": ["Cargo.toml", "bot.toml", "src/main.rs"],
    "go": ["bot.toml", "go.mod", "main.go"],
}


@pytest.mark.parametrize("runtime", RUNTIMES, ids=lambda r: r.key)
def test_a_kit_archive_holds_the_manifest_and_the_sources_in_one_folder(
    runtime: runtimes.Runtime, tmp_path: Path
) -> None:
    name, data = runtimes.kit_archive(runtime)
    assert name == f"yinsh-starter-{runtime.key}.zip"
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        names = zf.namelist()
        top = f"yinsh-starter-{runtime.key}/"
        assert names == [top + f for f in EXPECTED_FILES[runtime.key]]
        for info in zf.infolist():
            assert info.date_time == (1980, 1, 1, 0, 0, 0)
            assert info.external_attr >> 16 == 0o100644
            assert zf.read(info) == (runtime.kit / info.filename.removeprefix(top)).read_bytes()
    assert runtimes.kit_archive(runtime)[1] == data  # the same files, the same bytes


def test_a_kit_archive_leaves_out_build_outputs_links_and_hidden_files(tmp_path: Path) -> None:
    rust = runtimes.by_key("rust")
    copy = tmp_path / "rust"
    shutil.copytree(rust.kit, copy)
    (copy / "target" / "release").mkdir(parents=True)
    (copy / "target" / "release" / "starter-rust").write_bytes(b"\x7fELF")
    (copy / "Cargo.lock").write_text("version = 3\n")
    (copy / ".git").mkdir()
    (copy / ".git" / "config").write_text("[core]\n")
    (copy / ".env").write_text("SECRET=1\n")
    (copy / "src" / "__pycache__").mkdir()
    (copy / "src" / "__pycache__" / "x.pyc").write_bytes(b"")
    os.symlink("/etc/passwd", copy / "passwd")
    os.symlink("/etc", copy / "src" / "etc")
    assert runtimes.kit_files(rust, copy) == EXPECTED_FILES["rust"]
    _, data = runtimes.kit_archive(rust, copy)
    assert data == runtimes.kit_archive(rust)[1]


def test_the_image_and_dev_install_every_runtime() -> None:
    """Python comes with the image's base and runs ./dev; every other runtime's Debian
    packages are in the Dockerfile's apt-get line, in the compose test's base image (which
    the Dockerfile's apt-get step then finds installed) and first in ./dev's list (a
    "newer,default" pair falls back to the release's default package where the newer one is
    not packaged)."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    install = re.search(r"apt-get install -y --no-install-recommends([^&]*)", dockerfile)
    assert install is not None
    image_packages = set(install.group(1).replace("\\", " ").split())
    compose_base = re.search(
        r"PYTHON_PACKAGES = \(([^)]*)\)", (ROOT / "vm/composetest.py").read_text()
    )
    assert compose_base is not None
    base_packages = set(re.findall(r'"([^"]+)"', compose_base.group(1)))
    dev = (ROOT / "dev").read_text()
    listed = re.search(r"RUNTIME_PACKAGES=\(([^)]*)\)", dev)
    assert listed is not None
    dev_pairs = dict(entry.split(":") for entry in listed.group(1).split())
    for runtime in RUNTIMES:
        if runtime.key == "python":
            continue
        assert set(runtime.packages) <= image_packages, runtime.key
        assert set(runtime.packages) <= base_packages, runtime.key
        for command in runtime.commands:
            assert dev_pairs[command].split(",")[0] in runtime.packages, command
    assert "libc6-dev" in image_packages and "/usr/include/stdio.h" in dev
    # Rust: the newer toolchain, where Debian packages it, and never the release's rustc 1.63.
    assert dev_pairs["rustc"] == "rustc-web,rustc" and dev_pairs["cargo"] == "cargo-web,cargo"
    assert not {"rustc", "cargo"} & (image_packages | base_packages)
