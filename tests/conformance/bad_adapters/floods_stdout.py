"""Answers initialize, then logs 10,000 lines to stdout instead of stderr
(and says "flood done" on stderr), then serves like the reference. Nobody
asked for those lines: the suite must not keep them all in memory, and
reports the flood as a protocol error."""

import json
import sys

from _serve import serve_broken

from reqfold.reference.shells import adapter

request = json.loads(sys.stdin.buffer.readline())
result = adapter.dispatch("initialize", request["params"])
answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
sys.stdout.write(json.dumps(answer) + "\n")
sys.stdout.writelines(f"log: working on step {n:05d}\n" for n in range(10_000))
sys.stdout.flush()
print("flood done", file=sys.stderr, flush=True)
serve_broken({})
