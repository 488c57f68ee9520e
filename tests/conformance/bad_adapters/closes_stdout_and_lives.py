"""Answers ``initialize`` like the reference; asked anything else, closes
its stdout and lives on (its stderr open, reading nothing). No answer can
come any more: the suite must say it closed its stdout, at once, rather
than wait out ``--timeout`` and call it a timeout."""

import json
import os
import sys
import time

from reqfold.reference.shells import adapter

for line in sys.stdin.buffer:
    request = json.loads(line)
    if request.get("method") != "initialize":
        os.close(1)
        time.sleep(120)  # the hostile behaviour under test: alive, mute
        break
    result = adapter.METHODS["initialize"](request["params"])
    sys.stdout.write(
        json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n"
    )
    sys.stdout.flush()
