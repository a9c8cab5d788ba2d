"""Try every way out through sockets; report each attempt on one JSON line.

* TCP to the host's services (Redis, PostgreSQL, on 127.0.0.1 and ::1) and to the outside world,
  a DNS query over UDP to the outside world;
* the host's unix sockets by their files (PostgreSQL, Redis, MySQL, Docker, D-Bus) and by
  abstract names;
* socket families that leave a network namespace (AF_VSOCK to the hypervisor) or reach kernel
  code few programs use (every family but unix, IPv4, IPv6 and netlink), netlink protocols other
  than routing, and IPv4 protocols other than TCP, UDP and ICMP (SCTP, DCCP, L2TP, MPTCP...).

The test adds targets of its own: NETWORK_TCP, a JSON list of [host, port]; NETWORK_UNIX, a
JSON list of socket paths; NETWORK_ABSTRACT, a JSON list of abstract socket names. Its
unsandboxed control run sets NETWORK_CONTROL=1, which leaves out the outside world and the
family sweep (on a host, asking for a family or protocol loads its kernel module).

"reached" lists the attempts that got through. It also reports what works inside the bot's own
network namespace ("inside"): a TCP server on its loopback, a unix socket in /tmp, "localhost".
"""

import errno
import json
import os
import socket
import tempfile
from collections.abc import Callable

TIMEOUT = 2.0
HOST_SERVICES = [("127.0.0.1", 6379), ("::1", 6379), ("127.0.0.1", 5432), ("::1", 5432)]
OUTSIDE = [("1.1.1.1", 53), ("8.8.8.8", 443), ("2606:4700:4700::1111", 53)]
UNIX_FILES = [
    "/var/run/postgresql/.s.PGSQL.5432",
    "/run/postgresql/.s.PGSQL.5432",
    "/run/redis/redis-server.sock",
    "/var/run/redis/redis-server.sock",
    "/run/mysqld/mysqld.sock",
    "/var/run/docker.sock",
    "/run/dbus/system_bus_socket",
]
ABSTRACT = ["/tmp/.X11-unix/X0", "/org/kernel/linux/storage/multipathd"]
NAMESPACED_FAMILIES = {socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK}
AF_VSOCK, VMADDR_CID_HOST = 40, 2
IPPROTO_SCTP, IPPROTO_DCCP, SOCK_DCCP = 132, 33, 6
EXOTIC_INET = {
    "sctp": (socket.SOCK_STREAM, IPPROTO_SCTP),
    "dccp": (SOCK_DCCP, IPPROTO_DCCP),
    "udplite": (socket.SOCK_DGRAM, 136),
    "l2tp": (socket.SOCK_DGRAM, 115),
    "mptcp": (socket.SOCK_STREAM, 262),
}
control = os.environ.get("NETWORK_CONTROL") == "1"
results: dict[str, str] = {}


def name_of(exc: OSError) -> str:
    return errno.errorcode.get(exc.errno or 0, str(exc))


def attempt(label: str, act: Callable[[], object]) -> None:
    try:
        results[label] = str(act() or "reached")
    except OSError as exc:
        results[label] = name_of(exc)


def tcp(host: str, port: int) -> None:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.settimeout(TIMEOUT)
        s.connect((host, port))


def dns_over_udp(host: str) -> None:
    query = bytes.fromhex("abcd01000001000000000000") + b"\x07example\x03com\x00\x00\x01\x00\x01"
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(TIMEOUT)
        s.sendto(query, (host, 53))
        s.recv(512)


def unix(address: str) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(TIMEOUT)
        s.connect(address)


def vsock() -> None:
    with socket.socket(AF_VSOCK, socket.SOCK_STREAM) as s:
        s.settimeout(TIMEOUT)
        s.connect((VMADDR_CID_HOST, 22))


def created(family: int, kind: int, protocol: int = 0) -> str:
    socket.socket(family, kind, protocol).close()
    return "created"


def inside() -> dict[str, str]:
    """What works in the bot's own namespace."""
    found: dict[str, str] = {}
    try:
        with (
            socket.create_server(("127.0.0.1", 0)) as server,
            socket.create_connection(server.getsockname(), timeout=TIMEOUT) as client,
        ):
            peer, _ = server.accept()
            with peer:
                client.sendall(b"ping")
                found["loopback tcp"] = peer.recv(4).decode()
    except OSError as exc:
        found["loopback tcp"] = name_of(exc)
    path = os.path.join(tempfile.mkdtemp(), "own.sock")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
            server.bind(path)
            server.listen(1)
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
                client.connect(path)
                peer, _ = server.accept()
                with peer:
                    client.sendall(b"ping")
                    found["unix in /tmp"] = peer.recv(4).decode()
    except OSError as exc:
        found["unix in /tmp"] = name_of(exc)
    try:
        found["localhost"] = socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)[0][4][0]
    except OSError as exc:
        found["localhost"] = str(exc)
    return found


tcp_targets = HOST_SERVICES + [tuple(t) for t in json.loads(os.environ.get("NETWORK_TCP", "[]"))]
if not control:
    tcp_targets += OUTSIDE
for host, port in tcp_targets:
    attempt(f"tcp {host} {port}", lambda host=host, port=port: tcp(host, port))
if not control:
    attempt("udp 1.1.1.1 53", lambda: dns_over_udp("1.1.1.1"))
for path in UNIX_FILES + json.loads(os.environ.get("NETWORK_UNIX", "[]")):
    attempt(f"unix {path}", lambda path=path: unix(path))
for name in ABSTRACT + json.loads(os.environ.get("NETWORK_ABSTRACT", "[]")):
    attempt(f"abstract {name}", lambda name=name: unix("\0" + name))
families: dict[str, str] = {}
if not control:
    attempt("vsock host", vsock)
    for family in range(46):
        if family not in NAMESPACED_FAMILIES:
            try:
                families[str(family)] = created(family, socket.SOCK_DGRAM)
            except OSError as exc:
                families[str(family)] = name_of(exc)
    for protocol in range(1, 32):
        attempt(f"netlink {protocol}", lambda p=protocol: created(socket.AF_NETLINK, 3, p))
    for label, (kind, protocol) in EXOTIC_INET.items():
        attempt(f"inet {label}", lambda k=kind, p=protocol: created(socket.AF_INET, k, p))
    attempt("socketpair inet", lambda: socket.socketpair(socket.AF_INET) and "created")
reached = sorted(label for label, result in results.items() if result in ("reached", "created"))
print(
    json.dumps(
        {
            "act": "network",
            "reached": reached,
            "results": results,
            "families": families,
            "inside": inside(),
        }
    ),
    flush=True,
)
