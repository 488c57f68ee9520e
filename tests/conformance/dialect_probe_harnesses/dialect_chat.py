"""The reference chat over another wire dialect, for `reqfold probe --dialect`.

The loop, its log and its requests are the reference's (chat completions
by the wire mapping); this client translates each request, faithfully and
the same way every time, into the Anthropic messages or OpenAI Responses
format, and the answer back. It opts in to the provider's own cache
diagnostics (naming its previous answer), as one widely used harness does
on every request. Imported by `anthropic_chat.py` and `responses_chat.py`
(run as scripts, so this folder is on the path).
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from reqfold.reference.loop.client import ProviderReply
from reqfold.reference.loop.errors import ProviderError
from reqfold.reference.shells.chat import Chat


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part.get("text", "") for part in content if isinstance(part, dict)
        )
    return ""


def to_anthropic(body: dict[str, Any], previous: str | None) -> dict[str, Any]:
    """A chat-completions body as a messages body."""
    system = [m for m in body["messages"] if m["role"] in ("system", "developer")]
    messages: list[dict[str, Any]] = []
    for message in body["messages"][len(system) :]:
        role = message["role"]
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": message["tool_call_id"],
                "content": _text(message["content"]),
            }
            messages.append({"role": "user", "content": [block]})
        elif role == "assistant":
            blocks: list[dict[str, Any]] = []
            if _text(message.get("content")):
                blocks.append({"type": "text", "text": _text(message["content"])})
            blocks.extend(
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": json.loads(call["function"]["arguments"] or "{}"),
                }
                for call in message.get("tool_calls") or []
            )
            messages.append({"role": "assistant", "content": blocks})
        else:
            messages.append({"role": role, "content": _text(message["content"])})
    translated: dict[str, Any] = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "system": "\n".join(_text(m["content"]) for m in system),
        "messages": messages,
        "diagnostics": {"previous_message_id": previous},
    }
    if body.get("tools"):
        translated["tools"] = [
            {
                "name": tool["function"]["name"],
                "description": tool["function"].get("description", ""),
                "input_schema": tool["function"].get("parameters", {"type": "object"}),
            }
            for tool in body["tools"]
        ]
    return translated


def from_anthropic(answer: dict[str, Any]) -> ProviderReply:
    content: list[Any] = []
    for block in answer["content"]:
        if block["type"] == "text":
            content.append({"type": "text", "text": block["text"]})
        elif block["type"] == "tool_use":
            arguments = json.dumps(block["input"], separators=(",", ":"))
            content.append(
                {
                    "type": "tool-call",
                    "id": block["id"],
                    "name": block["name"],
                    "arguments": arguments,
                }
            )
    finish = "tool-calls" if answer["stop_reason"] == "tool_use" else "stop"
    return ProviderReply(content=content, usage=None, finish=finish)


def to_responses(body: dict[str, Any], previous: str | None) -> dict[str, Any]:
    """A chat-completions body as a Responses body (stateless: store false)."""
    system = [m for m in body["messages"] if m["role"] in ("system", "developer")]
    items: list[dict[str, Any]] = []
    for message in body["messages"][len(system) :]:
        role = message["role"]
        if role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": _text(message["content"]),
                }
            )
            continue
        if role != "assistant" or _text(message.get("content")):
            items.append({"role": role, "content": _text(message.get("content"))})
        items.extend(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": call["function"]["name"],
                "arguments": call["function"]["arguments"],
            }
            for call in message.get("tool_calls") or []
        )
    translated: dict[str, Any] = {
        "model": "gpt-5",
        "instructions": "\n".join(_text(m["content"]) for m in system),
        "input": items,
        "store": False,
    }
    if body.get("tools"):
        translated["tools"] = [
            {"type": "function", **tool["function"]} for tool in body["tools"]
        ]
    if previous is not None:
        translated["prompt_cache_options"] = {"comparison_response_id": previous}
    return translated


def from_responses(answer: dict[str, Any]) -> ProviderReply:
    content: list[Any] = []
    for item in answer["output"]:
        if item["type"] == "message":
            text = "".join(part.get("text", "") for part in item["content"])
            content.append({"type": "text", "text": text})
        elif item["type"] == "function_call":
            content.append(
                {
                    "type": "tool-call",
                    "id": item["call_id"],
                    "name": item["name"],
                    "arguments": item["arguments"],
                }
            )
    calls = any(part["type"] == "tool-call" for part in content)
    return ProviderReply(
        content=content, usage=None, finish="tool-calls" if calls else "stop"
    )


DIALECTS = {
    "anthropic": ("/v1/messages", to_anthropic, from_anthropic),
    "openai-responses": ("/v1/responses", to_responses, from_responses),
}


class TranslatingClient:
    """The loop's provider seam, speaking `dialect` on the wire."""

    def __init__(self, dialect: str, base_url: str, api_key: str) -> None:
        self.path, self.encode, self.decode = DIALECTS[dialect]
        self.base_url = base_url.rstrip("/")
        self.headers = {"authorization": f"Bearer {api_key}", "x-api-key": api_key}
        self.previous: str | None = None
        self.http = httpx.AsyncClient(timeout=30)

    async def __aenter__(self) -> TranslatingClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def complete(self, request: Any, signal: Any) -> ProviderReply:
        body = self.encode(request.body(stream=False), self.previous)
        response = await self.http.post(
            self.base_url + self.path, json=body, headers=self.headers
        )
        if response.status_code >= 400:
            raise ProviderError(
                response.text[:300], code="HTTP", status=response.status_code
            )
        answer = response.json()
        self.previous = answer["id"]
        return self.decode(answer)


def chat_over(dialect: str, base: type[Chat] = Chat) -> type[Chat]:
    """`base` (the reference chat) with a client that speaks `dialect`."""

    class DialectChat(base):  # type: ignore[valid-type,misc]
        def client(self, base_url: str, api_key: str) -> Any:
            return TranslatingClient(dialect, base_url, api_key)

    return DialectChat
