"""Answers ``instance/send`` for the second turn, then never ends that turn:
no ``turn/ended`` ever comes (a deadlock inside the harness's loop). The
suite must give up after --timeout, kill the adapter and report an error
for the scenario, never a pass."""

from __future__ import annotations

import asyncio

from _chaos import say, serve

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance


class NeverEndsTurns(HarnessServer):
    turns = 0

    async def run_turn(self, instance: Instance, prompt: str) -> None:
        self.turns += 1
        if self.turns < 2:
            await super().run_turn(instance, prompt)
            return
        say(f"turn {self.turns} of {instance.name} is stuck and will never end")
        await asyncio.Event().wait()


serve(NeverEndsTurns)
