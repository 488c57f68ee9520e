"""A conforming harness that declares one revision only (``session-prefix``):
a run that asks for another revision stops before any scenario, and the
adapter it started to read ``initialize`` must not outlive it."""

from __future__ import annotations

from typing import Any

from _chaos import serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer


class DeclaresSessionPrefixOnly(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        result = await super().handle(method, params)
        if method == "initialize":
            return {**result, "revisions": ["session-prefix"]}
        return result


serve(DeclaresSessionPrefixOnly)
