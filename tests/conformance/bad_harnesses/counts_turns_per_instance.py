"""Its adapter numbers the turns in ``turn/ended`` by counting the turns its
own instance ran, while the log numbers them across the session, so a
resumed instance reports turn 1 for the log's turn 3."""

from collections import Counter
from typing import Any

from reqfold.reference.shells.harness_adapter import HarnessServer, Instance, main


class CountsTurnsPerInstance(HarnessServer):
    def __init__(self, notify: Any, **options: Any) -> None:
        super().__init__(notify, **options)
        self.ran: Counter[str] = Counter()

    def turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        if turn is not None:
            self.ran[instance.name] += 1
            turn = self.ran[instance.name]
        super().turn_ended(instance, turn, reason)


raise SystemExit(main(server_class=CountsTurnsPerInstance))
