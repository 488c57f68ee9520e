"""Composes the session prefix again whenever it compacts the history ("rebuild
the context from scratch"), though compaction must leave the prefix alone."""

from reqfold.reference.loop import PreStepContext
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance, main


class CompactionRecomposesPrefix(HarnessServer):
    def install_hooks(self, instance: Instance) -> None:
        loop = instance.loop

        async def rebuild_context(context: PreStepContext) -> None:
            if instance.compact:  # about to compact: rebuild the context too
                composed = await loop.compose_prefix(context.turn, context.signal)
                loop.adopt_prefix(composed)

        loop.hooks.pre_step.register(rebuild_context)
        super().install_hooks(instance)


raise SystemExit(main(server_class=CompactionRecomposesPrefix))
