"""Keeps the last framing messages when the listeners give none, where an
empty framing means the request goes back to the bare history (its arm
``[]`` back to absence). Caught by ``request-messages-framing`` (the
request-messages revision): ``request-3`` [RMSG-2, HDR-4]."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop
from reqfold.reference.loop.contexts import Framing
from reqfold.reference.shells.harness_adapter import main


class FramingKeptWhenNoneIsGiven(AgentLoop):
    _last: Framing | None = None

    async def _framing(
        self,
        turn: int,
        step: int,
        system: str,
        derived: list[JsonObject],
        signal: AbortSignal,
    ) -> Framing:
        framing = await super()._framing(turn, step, system, derived, signal)
        if framing.before or framing.after:
            self._last = framing
            return framing
        return self._last or framing


raise SystemExit(main(loop_class=FramingKeptWhenNoneIsGiven))
