"""Prints a debug line on stdout in the middle of the first turn, the
classic mistake of logging to stdout instead of stderr, then goes on as the
reference does. A line that is not JSON is a protocol error: the scenario
gets no verdict."""

from __future__ import annotations

from _chaos import say, serve, write_stdout

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance


class WritesGarbage(HarnessServer):
    async def run_turn(self, instance: Instance, prompt: str) -> None:
        say("logging to the wrong stream")
        write_stdout(b"DEBUG composing the request for " + prompt.encode() + b"\n")
        await super().run_turn(instance, prompt)


serve(WritesGarbage)
