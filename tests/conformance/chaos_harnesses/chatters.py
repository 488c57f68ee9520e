"""Never ends its turns but keeps talking: from the first turn on it sends a
``contributor/started`` for an instance the suite never started, every 50
ms, forever (a stale listener of a disposed instance). Each notification
comes well within --timeout, so a suite that waits per notification would
wait forever; the turn's end must be bounded as a whole."""

from __future__ import annotations

import asyncio

from _chaos import say, serve

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance


class Chatters(HarnessServer):
    async def run_turn(self, instance: Instance, prompt: str) -> None:
        say(f"turn of {instance.name} started; chattering about a ghost instance")
        call = 0
        while True:
            call += 1
            params = {"instance": "ghost", "contributor": "rules", "call": call}
            self.notify("contributor/started", params)
            await asyncio.sleep(0.05)


serve(Chatters)
