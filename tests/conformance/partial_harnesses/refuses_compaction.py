"""The reference harness with an adapter that declares no ``features`` (so
every feature, as before the member existed, compaction among them) and
answers ``instance/compact`` with the error that means "not supported"
(-32003). Compaction was declared, so the scenario that compacts is played
and the refusal is an *error*, not an excuse; told which features it lacks
(an undeclared one, as ``ScenarioDriver`` may be), the same refusal is
*not covered*."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_adapter import HarnessServer, main

NOT_SUPPORTED = -32003


class RefusesCompaction(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method == "instance/compact":
            raise RpcError(NOT_SUPPORTED, "this harness compacts on its own only")
        result = await super().handle(method, params)
        if method == "initialize":
            result.pop("features", None)
        return result


raise SystemExit(main(server_class=RefusesCompaction))
