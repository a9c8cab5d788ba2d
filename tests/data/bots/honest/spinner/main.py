"""An honest but busy bot: says it is ready, then computes forever."""

import json

print(json.dumps({"ready": True}), flush=True)
n = 0
while True:
    n = (n * 1103515245 + 12345) % 2**31
