"""Connect to the Redis server on 127.0.0.1:6379 and ping it."""

import json
import socket

print(json.dumps({"act": "connect", "target": "127.0.0.1:6379"}), flush=True)
try:
    with socket.create_connection(("127.0.0.1", 6379), timeout=2) as connection:
        connection.sendall(b"PING\r\n")
        reply = connection.recv(64).decode(errors="replace")
    print(json.dumps({"act": "connect", "connected": True, "reply": reply}), flush=True)
except OSError as exc:
    print(json.dumps({"act": "connect", "connected": False, "error": str(exc)}), flush=True)
