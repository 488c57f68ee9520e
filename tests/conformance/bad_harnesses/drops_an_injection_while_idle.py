"""Takes an injected message only while a turn runs: one injected between turns
is silently dropped, never logged nor sent, where it must be logged in a
one-shot turn and join the next request."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer, main


class DropsAnInjectionWhileIdle(HarnessServer):
    async def inject(self, params: JsonObject) -> JsonObject:
        if self.instance_of(params).loop.running:  # a turn is running
            return await super().inject(params)
        return {}


raise SystemExit(main(server_class=DropsAnInjectionWhileIdle))
