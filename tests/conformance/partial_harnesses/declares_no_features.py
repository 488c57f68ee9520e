"""The reference harness declaring ``"features": []``: no optional feature at
all. Every scenario that needs one is *not covered*, and the reason names
each missing feature in plain words."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer, main


class DeclaresNoFeatures(HarnessServer):
    async def handle(self, method: str, params: JsonObject) -> Any:
        result = await super().handle(method, params)
        if method == "initialize":
            result["features"] = []
        return result


raise SystemExit(main(server_class=DeclaresNoFeatures))
