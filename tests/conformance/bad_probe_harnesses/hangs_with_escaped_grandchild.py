"""The reference chat, but it first starts a helper in a session of its own
(out of its process group) that holds stdout open, writes the helper's pid
to the file named by PROBE_TEST_PID_FILE, and hangs for good on its second
line. ``reqfold probe`` must give up at --timeout, kill the harness and the
helper (a group kill cannot reach it), and fail CHECK-3."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

from reqfold.reference.shells.chat import Chat, main

helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(300)"], start_new_session=True
)
with open(os.environ["PROBE_TEST_PID_FILE"], "w") as handle:
    handle.write(f"{os.getpid()} {helper.pid}\n")


class HangsOnTurnTwo(Chat):
    lines = 0

    async def read_line(self) -> str:
        line = await super().read_line()
        self.lines += 1
        if self.lines == 2:
            threading.Event().wait()  # blocks the event loop itself
        return line


raise SystemExit(main(chat=HangsOnTurnTwo))
