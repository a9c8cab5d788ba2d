"""Make a system call through another ABI of an x86_64 kernel, whose numbers differ.

A filter that read them with x86_64 numbers would be fooled: in the 32-bit ABI (``int 0x80``),
102 is ``socketcall``, which opens sockets without the ``socket`` call; in the x32 ABI, numbers
carry bit 30. ABI=i386 (the default) makes ``socketcall(SYS_SOCKET)`` through ``int 0x80``,
ABI=x32 makes ``getpid`` the x32 way. One JSON line says what is tried, one what came back.
"""

import ctypes
import json
import mmap
import os
import platform

abi = os.environ.get("ABI", "i386")
print(json.dumps({"act": "foreign_abi", "abi": abi, "machine": platform.machine()}), flush=True)
if platform.machine() != "x86_64":
    raise SystemExit("only an x86_64 kernel has these ABIs")
if abi == "i386":
    # push rbx; mov eax, 102 (socketcall); mov ebx, 1 (SYS_SOCKET); xor ecx, ecx;
    # int 0x80; pop rbx; ret
    code = bytes.fromhex("53b866000000bb0100000031c9cd805bc3")
    page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    page.write(code)
    call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
    result = call()
else:
    libc = ctypes.CDLL(None, use_errno=True)
    result = libc.syscall(0x40000000 | 39)
print(json.dumps({"act": "foreign_abi", "abi": abi, "survived": True, "result": result}))
