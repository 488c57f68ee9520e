"""Treats what a ``step/start`` listener appends as a note for the step in
flight, dropped once that step is built: never logged, so never sent, where
it must join the next request."""

from reqfold.reference.loop.freeze import FrozenObject
from reqfold.reference.shells.harness_adapter import (
    Contributor,
    HarnessServer,
    Instance,
    main,
)


class DropsAStepStartAppend(HarnessServer):
    def attach_step_start(self, instance: Instance, contributor: Contributor) -> None:
        def listener(event: FrozenObject) -> None:
            if event["type"] == "step/start":
                self.begin_call(instance, contributor)  # the append goes nowhere

        instance.loop.on_event(listener)


raise SystemExit(main(server_class=DropsAStepStartAppend))
