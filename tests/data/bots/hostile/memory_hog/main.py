"""Allocate and touch memory one MiB at a time until something stops it."""

import json

chunks = []
while True:
    chunks.append(b"x" * (1 << 20))  # written, so really resident
    if len(chunks) % 16 == 0:
        print(json.dumps({"act": "memory", "mib": len(chunks)}), flush=True)
    if len(chunks) >= 64 * 1024:
        print(json.dumps({"act": "memory", "mib": len(chunks), "done": True}), flush=True)
        break
