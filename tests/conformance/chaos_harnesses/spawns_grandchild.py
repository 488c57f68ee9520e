"""Starts a helper process that inherits stdout and stderr (and sleeps a
minute), records its pid, then serves like the reference until the second
turn, where ``--then hang`` blocks the adapter's event loop forever and
``--then exit`` exits with status 9. Either way the helper still holds the
adapter's stdout open, so the suite sees no end of file: it must give up at
--timeout on a hang, see the exit at once (not wait for an end of file),
and kill the whole process group, helper included.

With ``--escape`` the helper starts a session of its own, out of the
adapter's process group (an adapter must not do that:
docs/adapter-protocol.md). It still holds the pipes open and still carries
the marker in the adapter's environment: the run must end all the same, in
bounded time, and the suite must kill the helper too."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from _chaos import option, record_pid, say, serve

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance

THEN = option("then", "hang")
ESCAPE = "--escape" in sys.argv
helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=ESCAPE
)
record_pid(helper.pid, "escaped" if ESCAPE else "helper")


class SpawnsGrandchild(HarnessServer):
    turns = 0

    async def run_turn(self, instance: Instance, prompt: str) -> None:
        self.turns += 1
        if self.turns == 2:
            if THEN == "exit":
                say(f"exiting in turn 2; helper {helper.pid} keeps stdout open")
                os._exit(9)
            say(f"hanging in turn 2; helper {helper.pid} keeps stdout open")
            threading.Event().wait()  # blocks the event loop itself
        await super().run_turn(instance, prompt)


serve(SpawnsGrandchild)
