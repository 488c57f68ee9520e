"""Answers ``initialize`` like the reference, then never answers anything
else (it keeps reading, so nothing blocks on it). Every restart succeeds,
so only the suite's limit on timeouts in a row keeps a run from costing
--timeout per case. With ``--detach`` it first starts a helper in a
session of its own that would outlive it by a minute, and writes its pid
as ``detached-PID`` in the folder named by REQFOLD_BAD_STATE."""

import json
import os
import subprocess
import sys
from pathlib import Path

from reqfold.reference.shells import adapter

if "--detach" in sys.argv:
    helper = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    (Path(os.environ["REQFOLD_BAD_STATE"]) / f"detached-{helper.pid}").touch()

for line in sys.stdin.buffer:
    request = json.loads(line)
    if request.get("method") == "initialize":
        result = adapter.METHODS["initialize"](request["params"])
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
