"""Keeps the last framing messages when the listeners give none, where an empty
framing means the request goes back to the bare history (its arm ``[]`` back
to absence)."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.loop.contexts import Framing
from reqfold.reference.shells.harness_adapter import main


class FramingKeptWhenNoneIsGiven(AgentLoop):
    last_framing: Framing | None = None

    async def frame_messages(
        self,
        turn: int,
        step: int,
        system: str,
        derived: list[JsonObject],
        signal: AbortSignal,
    ) -> Framing:
        framing = await super().frame_messages(turn, step, system, derived, signal)
        if framing.before or framing.after:
            self.last_framing = framing
            return framing
        return self.last_framing or framing


raise SystemExit(main(loop_class=FramingKeptWhenNoneIsGiven))
