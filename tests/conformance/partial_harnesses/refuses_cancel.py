"""The reference harness with an adapter that answers ``instance/cancel``
with "not supported" (-32003): every harness must support a cancel, so the
scenario is an *error* (no verdict), never "not covered"."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_adapter import HarnessServer, main

NOT_SUPPORTED = -32003


class RefusesCancel(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        if method == "instance/cancel":
            raise RpcError(NOT_SUPPORTED, "no cancel here")
        return await super().handle(method, params)


raise SystemExit(main(server_class=RefusesCancel))
