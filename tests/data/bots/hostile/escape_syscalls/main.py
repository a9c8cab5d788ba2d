"""Try the system calls a sandbox escape or a host attack starts with; report each result."""

import ctypes
import errno
import json
import os
import subprocess
import threading

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
SIGCHLD = 17
# x86_64 numbers; aarch64 in the second column.
CALLS = {
    "ptrace(PTRACE_TRACEME)": ((101, 117), (0, 0, 0, 0)),
    "unshare(CLONE_NEWUSER)": ((272, 97), (CLONE_NEWUSER,)),
    "unshare(CLONE_NEWNS)": ((272, 97), (CLONE_NEWNS,)),
    "clone(CLONE_NEWUSER)": ((56, 220), (CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)),
    "mount(tmpfs)": ((165, 40), (b"none", b"/tmp", b"tmpfs", 0, None)),
    "keyctl(KEYCTL_GET_KEYRING_ID)": ((250, 219), (0, -3, 0)),
    "bpf(BPF_PROG_LOAD)": ((321, 280), (5, None, 0)),
    "io_uring_setup": ((425, 425), (8, None)),
    "perf_event_open": ((298, 241), (None, 0, -1, -1, 0)),
    "userfaultfd": ((323, 282), (0,)),
    "setns": ((308, 268), (0, 0)),
    "process_vm_readv": ((310, 270), (1, None, 0, None, 0, 0)),
    "init_module": ((175, 105), (None, 0, b"")),
    "reboot": ((169, 142), (0, 0, 0, None)),
}
arm = os.uname().machine == "aarch64"
results = {}
for name, (numbers, args) in CALLS.items():
    result = libc.syscall(numbers[arm], *args)
    code = ctypes.get_errno()
    results[name] = "succeeded" if result >= 0 else errno.errorcode.get(code, str(code))
holder = []
thread = threading.Thread(target=lambda: holder.append("thread ran"))
thread.start()
thread.join()
child = subprocess.run(["/bin/echo", "child ran"], capture_output=True, text=True, check=False)
print(
    json.dumps(
        {
            "act": "syscalls",
            "results": results,
            "thread": holder,
            "child": child.stdout.strip(),
        }
    ),
    flush=True,
)
