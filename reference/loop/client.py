"""The provider client: one request out, one assistant reply back, over httpx.

Implements the DeepSeek/OpenAI chat-completions dialect as docs/spec.md
section 12 maps it (the body is `reqfold.reference.request.build_chat_body`, sent
as compact JSON, WIRE-5) and reads the answer back, streaming (SSE, ending
``data: [DONE]``) or not.

The client takes an httpx transport (`httpx.AsyncBaseTransport`): the fake
provider plugs in there in-process, `httpx.MockTransport` in unit tests, and
the default network transport otherwise. Nothing is monkeypatched.

What comes back is a `ProviderReply`:

- ``content``: the assistant's content blocks in order of first sight
  (``reasoning``, ``text``, ``tool-call`` with the raw arguments string);
- ``usage``: ``{"inputTokens", "outputTokens", "cacheReadTokens"?}``, with
  ``inputTokens`` excluding cached input. The cached count is
  ``prompt_tokens_details.cached_tokens`` when the provider sends it (OpenAI,
  and DeepSeek too), else DeepSeek's ``prompt_cache_hit_tokens``;
- ``finish``: ``stop``, ``tool-calls`` or ``max-tokens``. Any other finish
  reason is an error (`ProviderError`, code ``MODEL_STOPPED_<REASON>``), as
  is an HTTP error status (codes ``AUTH``, ``RATE_LIMIT``,
  ``INVALID_REQUEST``, ``SERVER``, ``HTTP_<n>``), a broken stream
  (``STREAM_CLOSED``) or an unreadable answer (``MALFORMED_RESPONSE``).
"""

from __future__ import annotations

import json
import os
import ssl
import urllib.request
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from types import TracebackType
from typing import Any, Protocol

from reqfold.reference.json_values import JsonObject, canonical_json
from reqfold.reference.loop.abort import AbortSignal
from reqfold.reference.loop.errors import ProviderError, ProviderProtocolError
from reqfold.reference.loop.frozen_request import FrozenRequest
from reqfold.reference.loop.httpx_import import httpx
from reqfold.reference.request import check_settings

USER_AGENT = "reqfold-reference/0.1.0"

FINISH_REASONS = {"stop": "stop", "tool_calls": "tool-calls", "length": "max-tokens"}


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderReply:
    """The assistant's answer to one request."""

    content: list[JsonObject]
    usage: JsonObject | None
    finish: str
    raw_usage: JsonObject | None = field(default=None, compare=False)
    """The usage object exactly as the provider sent it."""


class Provider(Protocol):
    """Anything that answers a frozen request (the loop's one provider seam)."""

    async def complete(
        self, request: FrozenRequest, signal: AbortSignal
    ) -> ProviderReply:
        """Send `request` and return the reply."""
        ...


def map_usage(usage: Mapping[str, Any]) -> JsonObject:
    """Provider usage to ``{inputTokens, outputTokens, cacheReadTokens?}``."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if cached is None:
        cached = usage.get("prompt_cache_hit_tokens")
    prompt = usage.get("prompt_tokens")
    completion = usage.get("completion_tokens")
    if not isinstance(prompt, int) or not _is_count(prompt):
        raise ProviderProtocolError(
            "usage needs integer prompt_tokens", code="MALFORMED_RESPONSE"
        )
    if not _is_count(completion):
        raise ProviderProtocolError(
            "usage needs integer completion_tokens", code="MALFORMED_RESPONSE"
        )
    hit = cached if isinstance(cached, int) and _is_count(cached) else 0
    mapped: JsonObject = {"inputTokens": prompt - hit, "outputTokens": completion}
    if _is_count(cached):
        mapped["cacheReadTokens"] = cached
    return mapped


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _status_code(status: int) -> str:
    if status in (401, 403):
        return "AUTH"
    if status == 429:
        return "RATE_LIMIT"
    if status == 400:
        return "INVALID_REQUEST"
    if status >= 500:
        return "SERVER"
    return f"HTTP_{status}"


def _map_finish(reason: object) -> str:
    if reason is None:
        return "stop"
    if isinstance(reason, str) and reason in FINISH_REASONS:
        return FINISH_REASONS[reason]
    raise ProviderError(
        f"model stopped: {reason}", code=f"MODEL_STOPPED_{str(reason).upper()}"
    )


class _Assembler:
    """Accumulates deltas into content blocks in order of first sight."""

    def __init__(self) -> None:
        self.order: list[tuple[str, int]] = []
        self.reasoning = ""
        self.text = ""
        self.calls: dict[int, dict[str, str]] = {}
        self.usage: JsonObject | None = None
        self.finish: object = None

    def _open(self, key: tuple[str, int]) -> None:
        if key not in self.order:
            self.order.append(key)

    def feed_message(self, message: Mapping[str, Any]) -> None:
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            self._open(("reasoning", 0))
            self.reasoning += reasoning
        text = message.get("content")
        if isinstance(text, str) and text:
            self._open(("text", 0))
            self.text += text
        calls = message.get("tool_calls")
        for position, call in enumerate(calls if isinstance(calls, list) else []):
            if not isinstance(call, dict):
                raise ProviderProtocolError(
                    "a tool call must be an object", code="MALFORMED_RESPONSE"
                )
            index = call.get("index", position)
            self._open(("tool", index))
            stored = self.calls.setdefault(index, {"id": "", "name": "", "args": ""})
            function = call.get("function") or {}
            if isinstance(call.get("id"), str):
                stored["id"] = call["id"]
            if isinstance(function.get("name"), str):
                stored["name"] = function["name"]
            fragment = function.get("arguments")
            stored["args"] += fragment if isinstance(fragment, str) else ""

    def feed_payload(self, payload: Any, *, streaming: bool) -> None:
        if not isinstance(payload, dict):
            raise ProviderProtocolError(
                "a response payload must be a JSON object", code="MALFORMED_RESPONSE"
            )
        for choice in payload.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            message = choice.get("delta" if streaming else "message")
            if isinstance(message, dict):
                self.feed_message(message)
            if isinstance(choice.get("finish_reason"), str):
                self.finish = choice["finish_reason"]
        if isinstance(payload.get("usage"), dict):
            self.usage = payload["usage"]

    def reply(self) -> ProviderReply:
        content: list[JsonObject] = []
        for kind, index in self.order:
            if kind == "reasoning":
                content.append({"type": "reasoning", "text": self.reasoning})
            elif kind == "text":
                content.append({"type": "text", "text": self.text})
            else:
                call = self.calls[index]
                content.append(
                    {
                        "type": "tool-call",
                        "id": call["id"],
                        "name": call["name"],
                        "arguments": call["args"],
                    }
                )
        usage = map_usage(self.usage) if self.usage is not None else None
        return ProviderReply(
            content=content,
            usage=usage,
            finish=_map_finish(self.finish),
            raw_usage=self.usage,
        )


async def _sse_payloads(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Yield the ``data`` of each server-sent event, stopping at ``[DONE]``."""
    data: list[str] = []
    async for line in lines:
        if line == "":
            if data:
                payload = "\n".join(data)
                data = []
                if payload == "[DONE]":
                    return
                yield payload
            continue
        if line.startswith("data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(" ") else value)
    if data and "\n".join(data) == "[DONE]":
        return
    raise ProviderProtocolError(
        "the event stream ended without data: [DONE]", code="STREAM_CLOSED"
    )


def _tls_of(base_url: str) -> ssl.SSLContext:
    """The TLS context for a client of `base_url`.

    A plain-HTTP URL with no proxy in the environment is never reached over
    TLS: its client gets a context that trusts no certificate (any TLS
    connection it opened would fail, never pass unchecked) instead of
    httpx's default, whose CA bundle a harness adapter talking to a local
    fake provider would read at every start-up for nothing. Any other URL, or
    a proxy httpx would use (``urllib.request.getproxies``' http, https or
    all, what httpx reads), gets the default (`_tls`).
    """
    if base_url.lower().startswith("http://") and not (
        PROXIES_HTTPX_USES & urllib.request.getproxies().keys()
    ):
        return _trusting_nothing()
    return _tls()


PROXIES_HTTPX_USES = frozenset({"http", "https", "all"})
"""The schemes of ``urllib.request.getproxies`` httpx routes through a proxy
(``no`` only exempts hosts; ftp, socks and the rest httpx ignores)."""


@cache
def _trusting_nothing() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, built once per process and CA setting.

    Building it reads the whole CA bundle, tens of milliseconds; a new
    `httpx.AsyncClient` builds one unless it is given one, and the loop
    opens a client per conversation. httpx reads ``SSL_CERT_FILE`` and
    ``SSL_CERT_DIR`` when it builds one, so a change to either builds anew.
    """
    return _tls_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@cache
def _tls_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()


class ChatCompletionsClient:
    """A chat-completions provider over httpx.

    Args:
        base_url: the provider's base URL; requests go to ``base_url + path``.
        api_key: sent as ``authorization: Bearer ...`` when non-empty.
        transport: the httpx transport (the fake provider's, a
            `httpx.MockTransport`, or None for the network).
        stream: ask for a server-sent event stream (``stream: true``).
        settings: deployment members added to every body (``thinking``,
            ``reasoning_effort``); the log does not record them (WIRE-5).
            Naming a contract member (``model``, ``messages``, ``tools``,
            ``temperature``, ``max_tokens``, ``stop``) or a stream member
            raises `ValueError` here (`reqfold.reference.request.check_settings`).
    """

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str = "",
        transport: httpx.AsyncBaseTransport | None = None,
        stream: bool = True,
        settings: Mapping[str, Any] | None = None,
        path: str = "/chat/completions",
        timeout: float = 60.0,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.path = path
        check_settings(settings)
        self.stream = stream
        self.settings = dict(settings or {})
        self._api_key = api_key
        self._transport = transport
        self._timeout = timeout
        self._client: httpx.AsyncClient | None = None

    async def __aenter__(self) -> ChatCompletionsClient:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the underlying connection pool."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def body_for(self, request: FrozenRequest) -> JsonObject:
        """The wire body for `request` (WIRE-1 .. WIRE-5)."""
        return request.body(stream=self.stream, settings=self.settings)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers = {"authorization": f"Bearer {self._api_key}", **headers}
        headers["accept"] = "text/event-stream" if self.stream else "application/json"
        headers["user-agent"] = USER_AGENT
        return headers

    async def complete(
        self, request: FrozenRequest, signal: AbortSignal
    ) -> ProviderReply:
        """Send `request` and read the reply (the loop races this against `signal`)."""
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport,
                timeout=self._timeout,
                verify=_tls_of(self.base_url),
            )
        content = canonical_json(self.body_for(request)).encode("utf-8")
        url = self.base_url + self.path
        try:
            async with self._client.stream(
                "POST", url, content=content, headers=self._headers()
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise ProviderError(
                        _error_message(response),
                        code=_status_code(response.status_code),
                        status=response.status_code,
                    )
                assembler = _Assembler()
                if self.stream:
                    async for payload in _sse_payloads(response.aiter_lines()):
                        assembler.feed_payload(_parse(payload), streaming=True)
                else:
                    raw = await response.aread()
                    if not raw:
                        raise ProviderProtocolError(
                            "the response has no body", code="EMPTY_RESPONSE"
                        )
                    assembler.feed_payload(_parse(raw), streaming=False)
                return assembler.reply()
        except httpx.TransportError as error:
            code = (
                "STREAM_CLOSED"
                if isinstance(error, httpx.ReadError | httpx.RemoteProtocolError)
                else "NETWORK"
            )
            raise ProviderError(f"transport error: {error!r}", code=code) from error


def _parse(text: str | bytes) -> Any:
    try:
        return json.loads(text)
    except ValueError as error:
        raise ProviderProtocolError(
            f"unreadable response payload: {error}", code="MALFORMED_RESPONSE"
        ) from None


def _error_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
        if isinstance(message, str):
            return message
    return f"provider error (HTTP {response.status_code})"
