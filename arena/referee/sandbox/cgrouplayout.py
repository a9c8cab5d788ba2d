"""Where this host's cgroups are, and where the referee may make its bots' groups.

* **v1** (legacy or hybrid hosts): separate ``memory``, ``pids``, ``cpuacct`` and ``freezer``
  hierarchies, each mounted on its own directory; groups go under each mount point.
* **v2** (unified hosts): one hierarchy. A process may only make groups below its own
  group (a container sees its own group as the root of ``/sys/fs/cgroup``; a systemd service
  with ``Delegate=yes`` owns its unit's group), so groups go under the referee's *home*: the
  group the referee was started in. v2's "no internal processes" rule means the home can hand
  its controllers to child groups only once no process sits in it, so the referee's own
  processes move into the leaf ``<home>/arena-referees`` first (:func:`.cgroups.prepare_base`
  does that); a process already there has the group above as its home.

Reads only: every write to the cgroup filesystems is in the privileged :mod:`.cgroups`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REFEREE_GROUP",
    "V1_CONTROLLERS",
    "V2_CONTROLLERS",
    "CgroupLayout",
    "detect",
    "home_group",
    "own_v2_group",
]

V1_CONTROLLERS = ("memory", "pids", "cpuacct", "freezer")
V2_CONTROLLERS = ("memory", "pids")
#: The leaf group the referee's own processes move to on v2, so that its home group may
#: delegate controllers to the bots' groups beside it.
REFEREE_GROUP = "arena-referees"
#: What to tell an operator whose v2 group lacks the controllers.
DELEGATION_ADVICE = (
    "give the worker a cgroup of its own with these controllers delegated: for a systemd "
    "service, Delegate=yes; for a container, a private cgroup namespace with /sys/fs/cgroup "
    "writable (docker-compose.yml's worker settings; docs/deployment.md, 'cgroup v2 hosts')"
)


@dataclass(frozen=True)
class CgroupLayout:
    """Where the bots' groups are made.

    ``mounts`` maps each needed controller to the directory its groups go under: on v1 the
    controller's hierarchy mount point; on v2 the referee's home group, the same directory for
    every controller.
    """

    version: int
    mounts: tuple[tuple[str, Path], ...]

    def mount(self, controller: str) -> Path:
        """The directory holding ``controller``'s groups."""
        return dict(self.mounts)[controller]

    def hierarchies(self) -> tuple[Path, ...]:
        """Each distinct directory once."""
        seen: list[Path] = []
        for _, path in self.mounts:
            if path not in seen:
                seen.append(path)
        return tuple(seen)

    def describe(self) -> str:
        """A short line for the host report."""
        if self.version == 1:
            return "cgroup v1: " + ", ".join(f"{c} at {p}" for c, p in self.mounts)
        return f"cgroup v2 at {self.hierarchies()[0]} (memory, pids, cpu.stat, freeze, kill)"


def _read(path: Path) -> str:
    with open(path) as f:
        return f.read()


def _mountinfo() -> Iterator[tuple[Path, str, set[str]]]:
    """(mount point, filesystem type, super options) for every mount."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            fields = left.split()
            rest = right.split()
            if len(fields) < 5 or len(rest) < 3:
                continue
            mount_point = Path(fields[4].replace("\\040", " "))
            yield mount_point, rest[0], set(rest[2].split(","))


def own_v2_group(proc_self_cgroup: str) -> str:
    """This process's v2 group from the text of ``/proc/self/cgroup`` (``"/"`` if none).

    >>> own_v2_group("0::/system.slice/arena-worker.service\\n")
    '/system.slice/arena-worker.service'
    >>> own_v2_group("12:pids:/x\\n0::/\\n")
    '/'
    """
    for line in proc_self_cgroup.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return "/"


def home_group(mount: Path, own: str) -> Path:
    """The directory of the group the referee makes its bots' groups under.

    >>> home_group(Path("/sys/fs/cgroup"), "/system.slice/w.service")
    PosixPath('/sys/fs/cgroup/system.slice/w.service')
    >>> home_group(Path("/sys/fs/cgroup"), "/system.slice/w.service/arena-referees")
    PosixPath('/sys/fs/cgroup/system.slice/w.service')
    >>> home_group(Path("/sys/fs/cgroup"), "/")
    PosixPath('/sys/fs/cgroup')
    """
    parts = [p for p in own.split("/") if p]
    if parts and parts[-1] == REFEREE_GROUP:
        parts.pop()
    return mount.joinpath(*parts)


def detect() -> tuple[CgroupLayout | None, str]:
    """Find a usable layout; return it (or None) and a line saying what was found, and on v2
    what is missing in plain words."""
    v1: dict[str, Path] = {}
    v2: list[Path] = []
    for mount_point, fstype, options in _mountinfo():
        if fstype == "cgroup":
            for controller in V1_CONTROLLERS:
                if controller in options and controller not in v1:
                    v1[controller] = mount_point
        elif fstype == "cgroup2":
            v2.append(mount_point)
    if all(c in v1 for c in V1_CONTROLLERS):
        layout = CgroupLayout(1, tuple((c, v1[c]) for c in V1_CONTROLLERS))
        return layout, layout.describe()
    problems: list[str] = []
    for mount_point in v2:
        try:
            own = own_v2_group(_read(Path("/proc/self/cgroup")))
        except OSError:
            own = "/"
        home = home_group(mount_point, own)
        if not home.is_dir():
            # /proc/self/cgroup names a group outside what is mounted here (a cgroup
            # namespace's view of another mount): the mount is the home.
            home = mount_point
        try:
            available = set(_read(home / "cgroup.controllers").split())
        except OSError:
            continue
        missing = [c for c in V2_CONTROLLERS if c not in available]
        if not missing:
            layout = CgroupLayout(2, tuple((c, home) for c in (*V2_CONTROLLERS, "cpu")))
            return layout, layout.describe()
        problems.append(
            f"cgroup v2 at {mount_point}: this process's group {home} lacks the "
            f"{' and '.join(missing)} controller{'s' if len(missing) > 1 else ''}; "
            + DELEGATION_ADVICE
        )
    if problems:
        return None, "no usable cgroups: " + "; ".join(problems)
    found = sorted(v1) + [f"v2 at {p}" for p in v2]
    missing_v1 = [c for c in V1_CONTROLLERS if c not in v1]
    return None, (
        f"no usable cgroups: found {', '.join(found) or 'nothing'}; v1 is missing "
        f"{', '.join(missing_v1)} and no v2 hierarchy offers {', '.join(V2_CONTROLLERS)}"
    )
