"""Connect to the unix socket at SOCKET_PATH (a file the test makes visible) and talk."""

import errno
import json
import os
import socket

path = os.environ["SOCKET_PATH"]
print(json.dumps({"act": "unix", "path": path, "visible": os.path.exists(path)}), flush=True)
try:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        connection.sendall(b"hello")
        reply = connection.recv(64).decode(errors="replace")
    print(json.dumps({"act": "unix", "connected": True, "reply": reply}), flush=True)
except OSError as exc:
    error = errno.errorcode.get(exc.errno or 0, str(exc))
    print(json.dumps({"act": "unix", "connected": False, "error": error}), flush=True)
