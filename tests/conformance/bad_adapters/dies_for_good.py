"""Answers ``initialize``, then exits on its first request; every later
start exits at once, before ``initialize`` (a marker file in the folder
named by REQFOLD_BAD_STATE survives the restarts). The run must stop after
the restarts fail and say so, not try every case again."""

import json
import os
import sys
from pathlib import Path

from reqfold.reference.shells import adapter

marker = Path(os.environ["REQFOLD_BAD_STATE"]) / "started"
if marker.exists():
    sys.exit("dies_for_good: already ran once; refusing to start")
marker.touch()
request = json.loads(sys.stdin.buffer.readline())
result = adapter.METHODS["initialize"](request["params"])
answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
sys.stdout.write(json.dumps(answer) + "\n")
sys.stdout.flush()
sys.stdin.buffer.readline()
sys.exit(4)
