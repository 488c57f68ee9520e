"""Answers ``initialize`` like the reference; then, to every other request,
waits SECONDS (just under the run's ``--timeout``) and fails the same way
each time. ``python stalls_then_fails.py MODE SECONDS``, MODE one of:

* ``exit``: exits with status 4 (the run sees the adapter crash);
* ``wrong-id``: answers with an id the suite never sent.

Every restart succeeds, so only the suite's limit on failures of one kind
in a row keeps a run from costing nearly ``--timeout`` per case."""

import json
import os
import sys
import time

from reqfold.reference.shells import adapter

MODE, SECONDS = sys.argv[1], float(sys.argv[2])

for line in sys.stdin.buffer:
    request = json.loads(line)
    if request.get("method") == "initialize":
        answer = {
            "jsonrpc": "2.0",
            "id": request["id"],
            "result": adapter.METHODS["initialize"](request["params"]),
        }
    else:
        time.sleep(SECONDS)  # the hostile behaviour under test: a stall
        if MODE == "exit":
            os._exit(4)
        answer = {"jsonrpc": "2.0", "id": "never-sent", "result": {}}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
