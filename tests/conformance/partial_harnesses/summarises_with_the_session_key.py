"""The reference harness, but a model writes its compaction summary: a
one-shot request sent through the loop's own client settings, with the
session's API key, as the original harness does (where the protocol asks
for ``auxApiKey``). The request is no step of the log: the checker
recognises it as such (a CHECK-1 warning), and the scenario's ``request``
expectations skip it."""

from typing import Any

import httpx

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop.client import ChatCompletionsClient
from reqfold.reference.loop.compaction import Compactor
from reqfold.reference.loop.contexts import ConfigValue, PreStepContext, RequestContext
from reqfold.reference.loop.waterfall import Next
from reqfold.reference.shells.harness_adapter import HarnessServer, Instance, main


class SummarisesWithTheSessionKey(HarnessServer):
    def __init__(self, notify: Any, **options: Any) -> None:
        super().__init__(notify, **options)
        self.provider: tuple[str, str] = ("", "")

    def make_client(self, base_url: str, api_key: str) -> ChatCompletionsClient:
        self.provider = (base_url, api_key)
        return super().make_client(base_url, api_key)

    def install_hooks(self, instance: Instance) -> None:
        """The reference's hooks, with a compactor whose summary a model writes."""
        loop = instance.loop
        base_url, api_key = self.provider

        async def request_config(
            context: RequestContext, config: ConfigValue, next: Next[ConfigValue]
        ) -> ConfigValue:
            if instance.config is not None:
                return instance.config
            return await next()

        async def summarize(messages: list[JsonObject]) -> str:
            lines = [
                block.get("text", "")
                for message in messages
                for block in message.get("content", [])
                if isinstance(block, dict)
            ]
            body = {
                "model": "deepseek-chat",
                "messages": [
                    {"role": "system", "content": "Summarise the conversation."},
                    {"role": "user", "content": "\n".join(lines)},
                ],
            }
            async with httpx.AsyncClient() as client:
                answer = await client.post(
                    f"{base_url.rstrip('/')}/chat/completions",
                    json=body,
                    headers={"authorization": f"Bearer {api_key}"},
                )
            choice = answer.json()["choices"][0]["message"]["content"]
            return f"Summary: {choice}"

        compactor = Compactor(threshold_tokens=0, summarize=summarize)

        async def compact(context: PreStepContext) -> None:
            if instance.compact:
                instance.compact = False
                await compactor(context)

        loop.hooks.request.register(request_config)
        loop.hooks.pre_step.register(compact)


raise SystemExit(main(server_class=SummarisesWithTheSessionKey))
