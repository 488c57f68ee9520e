"""The reference harness, but it names its log itself (``<session>.own.jsonl``
in the folder it was given) and says so in ``session/open``'s answer, as
the protocol allows a harness that cannot choose its log's place."""

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer, main


class PicksItsOwnLogName(HarnessServer):
    async def open_session(self, params: JsonObject) -> Any:
        own = str(params["log"]).removesuffix(".jsonl") + ".own.jsonl"
        return await super().open_session({**params, "log": own})


raise SystemExit(main(server_class=PicksItsOwnLogName))
