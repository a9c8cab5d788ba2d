"""The compose deployment, run for real: ``docker compose up`` in a cgroup-v2-only VM.

    python3 vm/composetest.py [--rebuild] [--timeout SECONDS]

(``./dev vm-test --compose`` runs it.) No container registry is needed: everything comes from
Debian's packages, made on this machine with mmdebstrap and kept in the VM cache (see
vm/vmtest.py):

* the VM: Debian trixie with its Docker engine, compose and buildx, booted by QEMU with a
  user-mode network (the image build fetches the Dockerfile's packages and pip's build tools);
* three base images as root file system archives, loaded with ``docker import``: Python 3.11
  in ``/usr/local`` with the bots' runtimes (the Dockerfile's ``BASE_IMAGE``), PostgreSQL
  (``POSTGRES_IMAGE``, with vm/images/postgres-entrypoint) and Redis (``REDIS_IMAGE``).

In the VM, vm/guest/compose builds the arena's image, starts the repository's
docker-compose.yml, waits for every service to be healthy, creates an account, uploads a bot
through the API (vm/guest/compose_client.py), waits for the worker to check and rate it at the
full protection level, downloads the record of one of its games, and stops everything with
``docker compose down``, printing each step and the final state.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import vmtest
from vmtest import MIRROR, ROOT, log, run

VM_SUITE = "trixie"
VM_PACKAGES = (
    "linux-image-amd64",
    "initramfs-tools",
    "kmod",
    "util-linux",
    "iproute2",
    "procps",
    "ca-certificates",
    "python3",
    "docker.io",
    "docker-cli",
    "docker-compose",
    "docker-buildx",
    "iptables",
    "tini",
)
#: The arena image's base: Python in /usr/local (as the official image has it) and what the
#: Dockerfile installs, so that its own apt-get step finds it there.
PYTHON_PACKAGES = (
    "python3",
    "python3-venv",
    "ca-certificates",
    "bubblewrap",
    "util-linux",
    "nodejs",
    "openjdk-17-jdk-headless",
    "gcc",
    "g++",
    "libc6-dev",
    "rustc-web",
    "cargo-web",
    "golang-go",
)
CONTAINER_SUITE = "bookworm"
COPY_CAS = (
    'cp -r /usr/local/share/ca-certificates/. "$1/usr/local/share/ca-certificates/" '
    '2>/dev/null || true; chroot "$1" update-ca-certificates >/dev/null 2>&1'
)


def container_hooks(name: str) -> list[str]:
    """mmdebstrap's customize hooks for the base image ``name``."""
    if name == "python":
        return [
            'mkdir -p "$1/usr/share/man/man1"',
            COPY_CAS,
            'chroot "$1" python3 -m venv /usr/local',
            'env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$1" /usr/local/bin/pip install '
            "--quiet --no-cache-dir --cert /etc/ssl/certs/ca-certificates.crt 'setuptools>=77' "
            + " ".join(f"'{r}'" for r in vmtest.requirements(test_tools=False)),
        ]
    if name == "postgres":
        entrypoint = (ROOT / "vm" / "images" / "postgres-entrypoint").read_text()
        return [
            f"cat > \"$1/usr/local/bin/docker-entrypoint\" <<'EOF'\n{entrypoint}EOF\n"
            'chmod 755 "$1/usr/local/bin/docker-entrypoint"',
            # The server's own client tools first on PATH, as in the official image (Debian's
            # wrappers look for the clusters under /etc/postgresql, which this image has not).
            'for tool in "$1"/usr/lib/postgresql/*/bin/*; do '
            'ln -sf "${tool#"$1"}" "$1/usr/local/bin/"; done; rm -rf "$1/etc/postgresql"',
        ]
    return [
        # As the official image: reachable from the other containers without a password
        # (only the compose network reaches it).
        "printf '#!/bin/sh\\nexec /usr/bin/redis-server \"$@\" --protected-mode no\\n' "
        '> "$1/usr/local/bin/redis-server"; chmod 755 "$1/usr/local/bin/redis-server"'
    ]


CONTAINERS = {
    "python": PYTHON_PACKAGES,
    "postgres": ("postgresql", "util-linux"),
    "redis": ("redis-server", "redis-tools"),
}


def _key(parts: list[str]) -> str:
    for ca in sorted(Path("/usr/local/share/ca-certificates").glob("*.crt")):
        parts.append(ca.read_text(errors="replace"))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def image_key(name: str) -> str:
    return _key([CONTAINER_SUITE, MIRROR, name, *CONTAINERS[name], *container_hooks(name)])


def vm_key() -> str:
    return _key([VM_SUITE, MIRROR, *VM_PACKAGES, vmtest.INIT_SCRIPT, COPY_CAS])


def base_image(cache: Path, name: str, rebuild: bool) -> Path:
    """The root file system archive of the base image ``name``, made if it is not cached."""
    target = cache / f"base-{name}-{image_key(name)}.tar"
    if target.exists() and not rebuild:
        return target
    started = time.monotonic()
    log(f"making the {name} base image from Debian {CONTAINER_SUITE}")
    partial = target.with_suffix(".partial.tar")  # mmdebstrap picks its format by the suffix
    run(
        [
            "mmdebstrap",
            "--quiet",
            "--variant=minbase",
            "--include=" + ",".join(CONTAINERS[name]),
            *[f"--customize-hook={hook}" for hook in container_hooks(name)],
            CONTAINER_SUITE,
            str(partial),
            MIRROR,
        ]
    )
    partial.rename(target)
    log(f"{name} base image ready in {time.monotonic() - started:.0f} s")
    return target


def images_disk(archives: list[Path], work: Path) -> Path:
    """A disk holding the base images' archives, for the guest to ``docker import``."""
    folder = work / "images"
    folder.mkdir()
    for archive in archives:
        name = archive.name.split("-")[1]
        try:
            os.link(archive, folder / f"{name}.tar")
        except OSError:  # another file system, or hard links not allowed here
            shutil.copy(archive, folder / f"{name}.tar")
    disk = work / "images.img"
    vmtest._mkfs(folder, disk, vmtest._size_mb(folder) + 256)
    shutil.rmtree(folder)
    return disk


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rebuild", action="store_true", help="build the images again")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds for the VM")
    args = parser.parse_args(argv)
    started = time.monotonic()
    cache = vmtest.cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    host = cache / f"docker-host-{vm_key()}"
    try:
        archives = [base_image(cache, name, args.rebuild) for name in CONTAINERS]
        if args.rebuild or not (host / "root.img").exists():
            log(f"making the Docker host VM from Debian {VM_SUITE}")
            vmtest.build_image(
                host,
                suite=VM_SUITE,
                packages=VM_PACKAGES,
                hooks=[COPY_CAS, vmtest.INIT_HOOK],
                spare_mb=1024,
            )
    except (OSError, subprocess.CalledProcessError) as exc:
        log(f"the images could not be built ({exc}); the compose test did not run")
        return vmtest.NOT_RUN
    for old in [*cache.glob("base-*"), *cache.glob("docker-host-*")]:
        if old not in (host, *archives):
            vmtest._remove_unless_mounted(old)
    with tempfile.TemporaryDirectory(prefix="arena-compose-run-", dir=cache) as work:
        disk = vmtest.project_disk(Path(work))
        docker = Path(work) / "docker.img"
        with open(docker, "wb") as f:
            f.truncate(24 << 30)  # sparse: Docker's images, containers and volumes
        run(["mkfs.ext4", "-q", "-F", str(docker)], stdout=subprocess.DEVNULL)
        log("booting the Docker host: cgroup v2 only, user-mode network")
        status = vmtest.boot(
            host,
            [disk, docker, images_disk(archives, Path(work))],
            "arena.mode=host arena.run=compose",
            args.timeout,
            network=True,
            exact_time=False,
            memory_mb=6144,
        )
    log(f"compose: {'passed' if status == 0 else f'FAILED (exit {status})'}")
    log(f"total {time.monotonic() - started:.0f} s")
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
