"""The reference harness with one word of its system prompt changed ("small"
becomes "tiny"), the same on every request of every session: a behaviour
change the contract allows (it is conformant), which a regression snapshot
of the reference's runs must report as drift (tests/conformance/
test_snapshots_run.py)."""

from reqfold.reference.loop import AssembleContext, Assembly
from reqfold.reference.loop.waterfall import Next
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance, main


class RewordsTheSystemPrompt(HarnessServer):
    def install_hooks(self, instance: Instance) -> None:
        super().install_hooks(instance)

        async def reword(
            context: AssembleContext, assembly: Assembly, next: Next[Assembly]
        ) -> Assembly:
            later = await next()
            system = later.system.replace("small", "tiny")
            return Assembly(system=system, tools=later.tools)

        instance.loop.hooks.system_prompt.register(reword)


raise SystemExit(main(server_class=RewordsTheSystemPrompt))
