"""Applies a config update's sampling members (temperature, max tokens) to the
HTTP client as extra body members instead of the request config, so they are
sent but never logged."""

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import ChatCompletionsClient, FrozenRequest
from reqfold.reference.shells.harness_adapter import HarnessServer, main

WIRE_NAMES = {"temperature": "temperature", "maxTokens": "max_tokens", "stop": "stop"}


class ExtraBodyClient(ChatCompletionsClient):
    """A client with an ``extra_body``, merged into every request body."""

    extra_body: JsonObject

    def body_for(self, request: FrozenRequest) -> JsonObject:
        return {**super().body_for(request), **getattr(self, "extra_body", {})}


class SamplingSetOnTheClient(HarnessServer):
    def make_client(self, base_url: str, api_key: str) -> ChatCompletionsClient:
        return ExtraBodyClient(base_url=base_url, api_key=api_key, stream=True)

    async def update(self, params: JsonObject) -> JsonObject:
        config = params.get("config")
        if isinstance(config, dict):
            client = self.instance_of(params).client
            assert isinstance(client, ExtraBodyClient)
            sampling = {n: v for n, v in config.items() if n in WIRE_NAMES}
            client.extra_body = {WIRE_NAMES[n]: v for n, v in sampling.items()}
            params = {**params, "config": {"model": config["model"]}}
        return await super().update(params)


raise SystemExit(main(server_class=SamplingSetOnTheClient))
