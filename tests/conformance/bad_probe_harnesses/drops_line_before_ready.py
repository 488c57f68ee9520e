"""The reference chat, but like the original harness's stdio program on
resume: it prints its prompt before its agent exists, and a line that
arrives while the agent is still loading is silently dropped. Only then
does it say ``chat: agent ready`` on stderr and read lines for real.

Fed at once, its first line is lost and the harness goes idle: ``reqfold
probe`` must say so as soon as it is idle, not after the timeout; with
``--ready-when stderr:agent ready`` nothing is lost."""

from __future__ import annotations

import asyncio
import os
import select
import sys

from reqfold.reference.shells.chat import Chat, main

LOADING = 0.3
"""How long the agent takes to exist (seconds): what the harness does."""


class DropsLineBeforeReady(Chat):
    loaded = False

    async def read_line(self) -> str:
        if not self.loaded:
            self.loaded = True
            await asyncio.sleep(LOADING)
            fd = sys.stdin.fileno()
            while select.select([fd], [], [], 0)[0]:
                if not os.read(fd, 65536):
                    break
            sys.stderr.write("chat: agent ready\n")
            sys.stderr.flush()
        return await super().read_line()


raise SystemExit(main(chat=DropsLineBeforeReady))
