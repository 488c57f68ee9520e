"""The reference harness without on-demand compaction: it compacts only on
its own schedule, so its ``initialize`` leaves ``compact`` out of
``features`` and ``instance/compact`` is an unknown method. Every scenario
that compacts is *not covered*; the rest judge it as usual."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.adapter import METHOD_NOT_FOUND, RpcError
from reqfold.reference.shells.harness_adapter import FEATURES, HarnessServer, main


class DeclaresNoCompaction(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method == "instance/compact":
            raise RpcError(METHOD_NOT_FOUND, "no on-demand compaction")
        result = await super().handle(method, params)
        if method == "initialize":
            result["features"] = [name for name in FEATURES if name != "compact"]
        return result


raise SystemExit(main(server_class=DeclaresNoCompaction))
