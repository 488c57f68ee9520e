"""The reference chat, but each request carries only the latest user message
after the opening: the history its log derives is dropped on the wire (a
silent sliding window). The log is fine; the capture is not its rebuild:
``reqfold probe`` must fail REQ-1."""

from __future__ import annotations

from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import ChatCompletionsClient, FrozenRequest
from reqfold.reference.shells.chat import Chat, main


class ForgetfulClient(ChatCompletionsClient):
    def body_for(self, request: FrozenRequest) -> JsonObject:
        body = super().body_for(request)
        messages: list[Any] = list(body["messages"])
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        # keep the system prompt and the prefix (the first user message), and
        # the latest user message; drop everything in between
        if len(users) > 2:
            body["messages"] = [*messages[: users[0] + 1], messages[users[-1]]]
        return body


class RewritesHistory(Chat):
    def client(self, base_url: str, api_key: str) -> ChatCompletionsClient:
        return ForgetfulClient(base_url=base_url, api_key=api_key)


raise SystemExit(main(chat=RewritesHistory))
