"""Exits with status 7 during the second turn of a session, after answering
its ``instance/send`` (a segfault in the middle of a turn, say). With
REQFOLD_CHAOS_ONCE set it crashes in the first session that gets that far
only, so a test can show that the suite restarts it and the next scenario
still runs; with ``--stay-down`` as well, every start after that crash
exits at once (status 4), so the suite cannot restart it."""

from __future__ import annotations

import asyncio
import os
import sys

from _chaos import ONCE, first_time, record_pid, say, serve

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance

if "--stay-down" in sys.argv and os.path.exists(os.environ.get(ONCE, "")):
    record_pid(os.getpid(), "adapter")
    say("crashed before: refusing to start again (exit 4)")
    raise SystemExit(4)

TURNS: dict[str, int] = {}
"""Turns started per session."""


class CrashesInSecondTurn(HarnessServer):
    async def run_turn(self, instance: Instance, prompt: str) -> None:
        session = instance.session.name
        TURNS[session] = TURNS.get(session, 0) + 1
        if TURNS[session] == 2 and first_time():
            await asyncio.sleep(0)  # let instance/send be answered first
            say(f"segmentation fault in turn 2 of session {session} (exit 7)")
            os._exit(7)
        await super().run_turn(instance, prompt)


serve(CrashesInSecondTurn)
