"""Opens a seeded session as an empty one: the seed's events never reach the
log, so the history the harness sends lacks them."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer, main


class IgnoresTheSeed(HarnessServer):
    async def open_session(self, params: JsonObject) -> JsonObject:
        return await super().open_session(
            {name: value for name, value in params.items() if name != "seed"}
        )


raise SystemExit(main(server_class=IgnoresTheSeed))
