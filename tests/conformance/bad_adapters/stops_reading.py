"""Answers initialize, then stops reading its stdin without exiting (a
deadlocked event loop, say). A request larger than the pipe buffer can then
never be written: the suite must give up after --timeout and kill it, not
block until the adapter exits (it does, after 20 s, so a suite that blocks
still finishes)."""

import json
import sys
import time

request = json.loads(sys.stdin.buffer.readline())
answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"revisions": []}}
sys.stdout.write(json.dumps(answer) + "\n")
sys.stdout.flush()
time.sleep(20)
