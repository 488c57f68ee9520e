"""Takes an injected message only between turns; one injected while a turn runs
is dropped, never logged nor sent (the mirror of
``drops_an_injection_while_idle``)."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer, main


class DropsAnInjectionWhileBusy(HarnessServer):
    async def inject(self, params: JsonObject) -> Any:
        instance = self.instance_of(params)
        if instance.turn is not None:  # "busy: try again later"
            return {}
        return await super().inject(params)


raise SystemExit(main(server_class=DropsAnInjectionWhileBusy))
