"""A resumed instance opens its first request with a "session resumed" note,
on the wire only, so that request neither rebuilds from the log nor extends
the previous instance's last one. Caught by ``resume-without-drift``:
``log/REQ-5`` [REQ-5], and (a SHOULD, with ``--strict``) the resume's
``cache/request-3`` [CACHE-3]."""

import dataclasses

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import AbortSignal, AgentLoop, FrozenRequest, deep_freeze
from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.shells.harness_adapter import main

NOTE = {
    "role": "user",
    "content": [{"type": "text", "text": "(session resumed)"}],
}


class NotesAResumeOnTheWire(AgentLoop):
    _resumed: bool | None = None

    async def _assemble(self, turn: int, step: int) -> tuple[str, list[JsonObject]]:
        if self._resumed is None:  # this instance's first step
            self._resumed = self.session.request_header() is not None
        return await super()._assemble(turn, step)

    async def _dispatch(
        self, request: FrozenRequest, signal: AbortSignal, failure: Exception | None
    ) -> ProviderReply:
        if self._resumed:
            self._resumed = False
            messages = (deep_freeze(NOTE), *request.messages)
            request = dataclasses.replace(request, messages=messages)
        return await super()._dispatch(request, signal, failure)


raise SystemExit(main(loop_class=NotesAResumeOnTheWire))
