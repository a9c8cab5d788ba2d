"""Boot a Linux whose only cgroup hierarchy is v2 and run the sandbox's tests in it.

    python3 vm/vmtest.py [--mode container|systemd|both] [--rebuild] [--timeout SECONDS]

(``./dev vm-test`` installs what this needs, then runs it.) The VM image is made from Debian's
packages alone (mmdebstrap: a kernel, bubblewrap, Python, the runtimes the tests' bots use,
and a virtualenv with the project's dependencies) and kept outside the repository, in
``$ARENA_VM_CACHE`` or ``~/.cache/yinsh-arena/vm``, under a key of everything it was made from.
Each run copies the checkout (the files git knows) onto a second disk, boots the image
read-only (``snapshot=on``) under QEMU with TCG and the kernel option ``cgroup_no_v1=all``,
and its init (``vm/guest-init``) places the worker where a real deployment puts it:

* ``container``: in a cgroup namespace of its own whose root is a non-root group, as Docker
  with ``cgroup: private`` gives a container;
* ``systemd``: in ``/system.slice/arena-worker.service`` with the controllers delegated to
  it, as systemd does for a unit with ``Delegate=yes``.

There it runs ``vm/guest/tests``: the probe (which must report protection level FULL), then
the sandbox and hostile-bot tests with ``ARENA_REQUIRE_FULL_SANDBOX=1`` (a skip is a failure).
Standard library only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
#: What the guest needs: a kernel that boots from a virtio disk, the sandbox's tools, Python
#: for the tests, C for the hostile bots that are compiled, and a Redis server (a test checks
#: that bots cannot reach it).
PACKAGES = (
    "linux-image-amd64",
    "initramfs-tools",
    "bubblewrap",
    "util-linux",
    "python3",
    "python3-venv",
    "iproute2",
    "procps",
    "ca-certificates",
    "gcc",
    "libc6-dev",
    "redis-server",
)
#: The test tools taken from pyproject's ``dev`` extra (the rest of it is for linting).
TEST_TOOLS = ("pytest", "pytest-django", "pytest-timeout", "hypothesis")
VENV = "/opt/arena-venv"
#: The exit status when the image could not be built (so the tests could not run).
NOT_RUN = 3
INIT = "/sbin/arena-vm-init"
#: The guest's first process: mount the project disk and hand over to the checkout's init.
INIT_SCRIPT = """#!/bin/sh
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sysfs /sys
mountpoint -q /dev || mount -t devtmpfs devtmpfs /dev
mkdir -p /arena
mount /dev/vdb /arena || { echo "vm: cannot mount the project disk"; echo "vm: exit 97"; \
echo o > /proc/sysrq-trigger; }
exec /bin/sh /arena/vm/guest-init
"""

#: The customize hook that installs it.
INIT_HOOK = f'cat > "$1{INIT}" <<\'EOF\'\n{INIT_SCRIPT}EOF\nchmod 755 "$1{INIT}"'


def log(message: str) -> None:
    print(f"vm-test: {message}", flush=True)


def run(command: list[str], **kwargs: object) -> None:
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


def requirements(*, test_tools: bool = True) -> list[str]:
    """The project's dependencies (and the test tools), as pyproject names them."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    dev = project["optional-dependencies"]["dev"]
    tools = [r for r in dev if re.split(r"[<>=\[ ]", r, maxsplit=1)[0] in TEST_TOOLS]
    return [*project["dependencies"], *(tools if test_tools else [])]


def customize_hooks() -> list[str]:
    """What mmdebstrap runs in the new root file system (``$1``) once the packages are in."""
    return [
        # This machine may reach the package index through an inspecting proxy: the guest
        # trusts the same extra certificate authorities as the host.
        'cp -r /usr/local/share/ca-certificates/. "$1/usr/local/share/ca-certificates/" '
        "2>/dev/null || true",
        'chroot "$1" update-ca-certificates >/dev/null 2>&1',
        f'chroot "$1" python3 -m venv {VENV}',
        f'env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$1" {VENV}/bin/pip install --quiet '
        "--no-cache-dir --cert /etc/ssl/certs/ca-certificates.crt "
        + " ".join(f"'{r}'" for r in requirements()),
        INIT_HOOK,
    ]


def image_key() -> str:
    """Changes whenever the image would come out different."""
    text = "\n".join([SUITE, MIRROR, *PACKAGES, *customize_hooks()])
    for ca in sorted(Path("/usr/local/share/ca-certificates").glob("*.crt")):
        text += ca.read_text(errors="replace")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("ARENA_VM_CACHE") or Path.home() / ".cache" / "yinsh-arena" / "vm"
    return Path(base)


def build_image(
    target: Path,
    *,
    suite: str = SUITE,
    packages: tuple[str, ...] = PACKAGES,
    hooks: list[str] | None = None,
    spare_mb: int = 512,
) -> None:
    """Make ``target``/{root.img,vmlinuz,initrd.img} from Debian's packages (by default the
    image of the sandbox's tests)."""
    started = time.monotonic()
    work = Path(tempfile.mkdtemp(prefix="arena-vm-build-", dir=target.parent))
    try:
        rootfs = work / "rootfs"
        rootfs.mkdir()
        hooks = customize_hooks() if hooks is None else hooks
        log(f"building a VM image from Debian {suite} (a few minutes, once)")
        run(
            [
                "mmdebstrap",
                "--quiet",
                "--variant=minbase",
                "--include=" + ",".join(packages),
                *[f"--customize-hook={hook}" for hook in hooks],
                suite,
                str(rootfs),
                MIRROR,
            ]
        )
        boot = rootfs / "boot"
        shutil.copy(max(boot.glob("vmlinuz-*")), work / "vmlinuz")
        shutil.copy(max(boot.glob("initrd.img-*")), work / "initrd.img")
        _mkfs(rootfs, work / "root.img", _size_mb(rootfs) + spare_mb)
        shutil.rmtree(rootfs)
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
        log(f"image ready in {time.monotonic() - started:.0f} s: {target}")
    finally:
        if work.exists():
            _remove_unless_mounted(work)


def _remove_unless_mounted(path: Path) -> None:
    """Remove a build folder, unless something is still mounted in it (mmdebstrap's chroot
    mounts /dev, /proc and /sys while it works; removing through them would be harmful)."""
    with open("/proc/self/mountinfo") as f:
        mounted = [line.split()[4] for line in f]
    if any(m == str(path) or m.startswith(f"{path}/") for m in mounted):
        log(f"left {path} in place: something is still mounted in it")
        return
    shutil.rmtree(path, ignore_errors=True)


def _size_mb(directory: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                total += os.lstat(path).st_size
    return total // (1 << 20) + 1


def _mkfs(source: Path, image: Path, size_mb: int) -> None:
    with open(image, "wb") as f:
        f.truncate(size_mb << 20)
    run(["mkfs.ext4", "-q", "-F", "-d", str(source), str(image)], stdout=subprocess.DEVNULL)


def project_disk(work: Path) -> Path:
    """The checkout as git sees it (tracked and new files, without ignored ones) on a disk."""
    files = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    tree = work / "arena"
    for name in filter(None, files):
        source = ROOT / os.fsdecode(name)
        if not source.is_file():
            continue  # deleted but not yet committed
        dest = tree / os.fsdecode(name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, dest)
    image = work / "arena.img"
    _mkfs(tree, image, _size_mb(tree) * 2 + 256)
    return image


def boot(
    image: Path,
    disks: list[Path],
    options: str,
    timeout: float,
    *,
    network: bool = False,
    exact_time: bool = True,
    memory_mb: int = 3072,
) -> int:
    """Boot ``image`` with ``disks`` after its root disk and ``options`` on the kernel command
    line; echo its console; return the exit status its init reports ("vm: exit N").

    ``exact_time``: the guest's clock counts instructions (one per nanosecond), not the host's
    seconds, so that a bot's CPU time and the tests' deadlines mean what they mean on real
    hardware, however slow the emulation or busy the host (QEMU's ``-icount``; one CPU).
    ``network``: QEMU's user-mode network (outgoing connections only).
    """
    # QEMU counts instructions on one virtual CPU only (with two, SeaBIOS hangs here).
    cpus = 1 if exact_time else max(1, min(4, os.cpu_count() or 1))
    command = [
        "qemu-system-x86_64",
        "-accel",
        # One host thread runs every virtual CPU in turn: with a thread each (QEMU's default),
        # the compose run's guest kernel died of a double fault in its slab allocator, and a
        # PostgreSQL backend crashed in another run; the one-CPU runs never did.
        "tcg" if exact_time else "tcg,thread=single",
        *(["-icount", "shift=0,sleep=on"] if exact_time else []),
        "-cpu",
        "max",
        "-smp",
        str(cpus),
        "-m",
        str(memory_mb),
        "-nographic",
        "-no-reboot",
        "-nic",
        "user,model=virtio-net-pci" if network else "none",
        "-kernel",
        str(image / "vmlinuz"),
        "-initrd",
        str(image / "initrd.img"),
        "-drive",
        f"file={image / 'root.img'},format=raw,if=virtio,snapshot=on",
        *[arg for disk in disks for arg in ("-drive", f"file={disk},format=raw,if=virtio")],
        "-append",
        # panic=1: a guest kernel that panics restarts, which -no-reboot makes QEMU's exit
        # (it would otherwise sit halted until the timeout).
        f"root=/dev/vda rw console=ttyS0 quiet loglevel=3 panic=1 init={INIT} cgroup_no_v1=all "
        + options,
    ]
    status: int | None = None
    with subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    ) as qemu:
        assert qemu.stdout is not None
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as selector:
            selector.register(qemu.stdout, selectors.EVENT_READ)
            buffer = b""
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    log(f"the VM did not finish within {timeout:.0f} s; stopping it")
                    qemu.kill()
                    break
                if not selector.select(timeout=min(left, 5)):
                    continue
                chunk = os.read(qemu.stdout.fileno(), 65536)
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    line = raw.decode(errors="replace").rstrip("\r")
                    print(line, flush=True)
                    found = re.fullmatch(r"vm: exit (\d+)", line.strip())
                    if found:
                        status = int(found.group(1))
        qemu.wait()
    return 98 if status is None else status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("container", "systemd", "both"), default="both")
    parser.add_argument("--rebuild", action="store_true", help="build the image again")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per boot")
    args = parser.parse_args(argv)

    started = time.monotonic()
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    image = cache / f"image-{image_key()}"
    if args.rebuild or not (image / "root.img").exists():
        try:
            build_image(image)
        except (OSError, subprocess.CalledProcessError) as exc:
            # The package mirror or the package index out of reach, a full disk: the tests
            # did not run, which is not their failure.
            log(f"the VM image could not be built ({exc}); the tests did not run")
            return NOT_RUN
    else:
        log(f"using the cached VM image {image}")
    for old in cache.glob("image-*"):
        if old != image:
            _remove_unless_mounted(old)

    modes = ("container", "systemd") if args.mode == "both" else (args.mode,)
    results: dict[str, int] = {}
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="arena-vm-run-", dir=cache) as work:
            disk = project_disk(Path(work))
            log(f"booting: cgroup v2 only, worker placed as in a {mode}")
            boot_started = time.monotonic()
            results[mode] = boot(image, [disk], f"arena.mode={mode} arena.run=tests", args.timeout)
            log(f"{mode}: exit {results[mode]} after {time.monotonic() - boot_started:.0f} s")
    total = time.monotonic() - started
    for mode, status in results.items():
        log(f"{mode}: {'passed' if status == 0 else f'FAILED (exit {status})'}")
    log(f"total {total:.0f} s")
    return 0 if all(s == 0 for s in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
