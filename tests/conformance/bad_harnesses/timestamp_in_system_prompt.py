"""Puts the current time in the system prompt, so the prompt changes on every
request and no request reuses the provider's cache past its first line. A
SHOULD (CACHE-2): it passes, with a warning, unless ``--strict``."""

from reqfold.reference.loop import AssembleContext, Assembly
from reqfold.reference.loop.waterfall import Next
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance, main


class TimestampInSystemPrompt(HarnessServer):
    def install_hooks(self, instance: Instance) -> None:
        super().install_hooks(instance)
        clock = instance.session.clock

        async def stamp(
            context: AssembleContext, assembly: Assembly, next: Next[Assembly]
        ) -> Assembly:
            later = await next()
            system = f"{later.system}\nCurrent time: {clock()} ms."
            return Assembly(system=system, tools=later.tools)

        instance.loop.hooks.system_prompt.register(stamp)


raise SystemExit(main(server_class=TimestampInSystemPrompt))
