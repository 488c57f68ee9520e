"""The dialects as a table: one object per wire dialect the fake speaks.

The provider core looks its dialect up once (`DIALECTS[profile.dialect]`)
and asks it everything that differs between wire formats: which paths it
serves, how a body is validated and cut into prompt segments, how a
prompt is accounted against the cache, how an answer, an error and a
fault are rendered, and what an unknown model gets. No code outside this
table compares dialect names or tests which kind of call it holds.

- `deepseek` and `openai`: `ChatDialect` (chat completions; automatic
  prefix caching in blocks, `reqfold.fakes.cache_index`);
- `anthropic`: `MessagesDialect` (messages; `cache_control` breakpoints);
- `openai-responses`: `ResponsesDialect` (the Responses API; automatic
  prefix caching as `openai`, conversation state by `previous_response_id`).

A new dialect is one entry in `DIALECTS` (with its profile in
`reqfold.fakes.profiles`) plus its module.

The interface and what the dialects share are in
`reqfold.fakes.dialects.base` (re-exported here for the core); the
Responses dialect's object is in `responses_dialect`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from reqfold.fakes.diagnostics import Comparison, DivergenceLedger
from reqfold.fakes.dialects import anthropic, openai_chat
from reqfold.fakes.dialects.base import (
    Accounting,
    Answer,
    CacheState,
    Dialect,
    OpenAIErrorEnvelope,
    account_blocks,
    cache_rule,
    served_hint,
)
from reqfold.fakes.dialects.common import EPOCH, output_tokens
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo, render_messages
from reqfold.fakes.dialects.responses_dialect import ResponsesDialect
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue, json_object
from reqfold.fakes.native_diagnostics import (
    NOT_ASKED,
    Fingerprint,
    FingerprintStore,
    NativeDiagnosis,
    anthropic_cache_miss,
)
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import RenderedPrompt, Segment, render_prompt
from reqfold.fakes.routes import RequestTexts
from reqfold.fakes.script import Fault, Reply
from reqfold.fakes.tokenizer import SegmentEncoder

__all__ = [
    "DIALECTS",
    "Accounting",
    "Answer",
    "CacheState",
    "ChatDialect",
    "Dialect",
    "MessagesDialect",
    "ResponsesDialect",
    "cache_rule",
    "dialect_serving",
]


@dataclass(frozen=True, slots=True)
class ChatDialect(OpenAIErrorEnvelope[openai_chat.ChatCall]):
    """Chat completions, DeepSeek or OpenAI flavour (automatic prefix cache).

    The flavours differ in data: the unknown-model error's status, code
    and wording (the usage fields and ids differ inside `openai_chat`).
    """

    unknown_status: int
    unknown_code: str
    unknown_wording: str  # formatted with the model: `{model}`, `{quoted}`
    family: str = "chat completions"
    paths: tuple[str, ...] = openai_chat.CHAT_PATHS
    uses_block_keys: bool = True

    def parse(self, body: JsonValue) -> openai_chat.ChatCall:
        return openai_chat.parse_chat_request(body)

    def segments(self, call: openai_chat.ChatCall, profile: Profile) -> list[Segment]:
        return openai_chat.chat_segments(call, profile.render_order)

    def texts(self, body: JsonObject) -> RequestTexts:
        return openai_chat.request_texts(body)

    def render(
        self,
        call: openai_chat.ChatCall,
        profile: Profile,
        encoder: SegmentEncoder,
        messages: MessagePrefixMemo | None,
    ) -> RenderedPrompt:
        if messages is None or tuple(profile.render_order) != TOOLS_FIRST:
            return Dialect.render(self, call, profile, encoder, messages)
        # Tools first, then every message in order (leading system messages
        # are the system section): the messages run is one block at the end.
        tools = render_prompt(
            openai_chat.chat_tool_segments(call), encoder, by_value=True
        )
        rendered = render_messages(call.messages, encoder, messages)
        base = tools.n_tokens
        return RenderedPrompt(
            segments=tools.segments + tuple(rendered.segments),
            digests=tools.digests + tuple(rendered.digests),
            ends=tools.ends + tuple(base + end for end in rendered.ends),
            tokens=tools.tokens + b"".join(rendered.packed),
        )

    def account(
        self,
        state: CacheState,
        call: openai_chat.ChatCall,
        prompt: RenderedPrompt,
        keys: list[bytes],
        root: bytes,
        comparison: Comparison,
        reply: Reply,
        profile: Profile,
    ) -> Accounting:
        cached, matched, expected = account_blocks(
            state, call.model, prompt, keys, comparison, profile
        )
        completion, reasoning = output_tokens(reply)
        usage = openai_chat.chat_usage(
            profile,
            prompt=prompt.n_tokens,
            cached=cached,
            completion=completion,
            reasoning=reasoning,
        )
        return Accounting(
            usage=json_object(usage),
            cached=cached,
            matched=matched,
            expected=expected,
            written=0,
        )

    def answer(
        self,
        profile: Profile,
        index: int,
        call: openai_chat.ChatCall,
        reply: Reply,
        now: float,
        usage: JsonObject,
        native: JsonObject | None = None,
    ) -> Answer:
        answer = openai_chat.ChatAnswer(
            profile=profile,
            index=index,
            created=EPOCH + int(now),
            model=call.model,
            reply=reply,
            call_ids=openai_chat.chat_call_ids(profile, index, reply),
            usage=cast(openai_chat.ChatUsage, usage),
        )
        stream = call.stream
        return Answer(
            emitted=openai_chat.emitted_message(answer),
            body=None if stream else openai_chat.chat_completion(answer),
            frames=(
                openai_chat.chat_stream_frames(answer, call.include_usage)
                if stream
                else None
            ),
            keepalive=openai_chat.KEEPALIVE_FRAME,
        )

    def unknown_model(self, profile: Profile, model: str) -> InvalidRequest:
        message = self.unknown_wording.format(model=model, quoted=repr(model))
        return InvalidRequest(
            message + served_hint(profile),
            status=self.unknown_status,
            param="model",
            code=self.unknown_code,
        )


@dataclass(frozen=True, slots=True)
class MessagesDialect(Dialect[anthropic.MessagesCall]):
    """Anthropic messages (explicit `cache_control` breakpoints)."""

    family: str = "anthropic"
    paths: tuple[str, ...] = anthropic.MESSAGES_PATHS
    uses_block_keys: bool = False

    def parse(self, body: JsonValue) -> anthropic.MessagesCall:
        return anthropic.parse_messages_request(body)

    def segments(self, call: anthropic.MessagesCall, profile: Profile) -> list[Segment]:
        return anthropic.messages_segments(call, profile.render_order)

    def texts(self, body: JsonObject) -> RequestTexts:
        return anthropic.request_texts(body)

    def check(self, segments: list[Segment], profile: Profile) -> None:
        anthropic.check_breakpoints(segments, profile.breakpoint_limit)

    def account(
        self,
        state: CacheState,
        call: anthropic.MessagesCall,
        prompt: RenderedPrompt,
        keys: list[bytes],
        root: bytes,
        comparison: Comparison,
        reply: Reply,
        profile: Profile,
    ) -> Accounting:
        minimum = profile.minimum_for(call.model)
        result = anthropic.account_breakpoints(
            state.index,
            root,
            prompt,
            now=state.now,
            minimum=minimum,
            lookback=profile.lookback_blocks,
            ttl_short=profile.ttl,
            ttl_long=profile.ttl_long,
        )
        completion, _ = output_tokens(reply)
        expected = _breakpoint_expected(state.ledger, prompt, comparison, minimum)
        return Accounting(
            usage=json_object(anthropic.messages_usage(result, completion)),
            cached=result.read,
            matched=result.matched,
            expected=min(expected, result.cacheable),
            written=result.written_total,
        )

    def answer(
        self,
        profile: Profile,
        index: int,
        call: anthropic.MessagesCall,
        reply: Reply,
        now: float,
        usage: JsonObject,
        native: JsonObject | None = None,
    ) -> Answer:
        answer = anthropic.MessagesAnswer(
            profile=profile,
            index=index,
            model=call.model,
            reply=reply,
            tool_ids=anthropic.tool_use_ids(profile, index, reply),
            usage=cast(anthropic.MessagesUsage, usage),
            native=native or {},
        )
        stream = call.stream
        return Answer(
            emitted=anthropic.emitted_message(answer),
            body=None if stream else anthropic.messages_body(answer),
            frames=anthropic.messages_stream_frames(answer) if stream else None,
            keepalive=anthropic.PING_FRAME,
            answer_id=anthropic.message_id(answer),
        )

    def diagnoses(self, call: anthropic.MessagesCall) -> bool:
        return call.diagnostics  # only requests that opt in, as on the API

    def native_diagnosis(
        self,
        call: anthropic.MessagesCall,
        current: Fingerprint,
        fingerprints: FingerprintStore,
    ) -> NativeDiagnosis:
        # Only requests that opt in are fingerprinted, as on the API.
        if not call.diagnostics:
            return NOT_ASKED
        if call.previous_message_id is None:
            return NativeDiagnosis(kept=True, members={"diagnostics": None})
        earlier = fingerprints.get(call.previous_message_id)
        return NativeDiagnosis(
            kept=True,
            members={"diagnostics": anthropic_cache_miss(earlier, current)},
            compared=True,
        )

    def error_body(
        self,
        status: int,
        message: str,
        *,
        error_type: str,
        param: str | None,
        code: str | None,
    ) -> JsonObject:
        if error_type == "invalid_request_error":
            error_type = anthropic.FAULT_TYPES.get(status, error_type)
        return json_object(
            anthropic.messages_error_body(message, error_type=error_type)
        )

    def fault_body(self, fault: Fault) -> JsonObject:
        return json_object(
            anthropic.messages_fault_body(fault.status, fault.message, fault.error_type)
        )

    def unknown_model(self, profile: Profile, model: str) -> InvalidRequest:
        return InvalidRequest(
            f"model: {model}{served_hint(profile)}",
            status=404,
            error_type="not_found_error",
        )


TOOLS_FIRST = ("tools", "system", "messages")


def _breakpoint_expected(
    ledger: DivergenceLedger,
    prompt: RenderedPrompt,
    comparison: Comparison,
    minimum: int,
) -> int:
    """Tokens the closest earlier request left in the cache for this one.

    Only breakpoint blocks are ever written: the end of the deepest
    marker (long enough to be cached) among the segments both requests
    share, not the whole shared prefix.
    """
    if comparison.closest_request is None:
        return 0
    earlier = ledger.segments_of(comparison.closest_request)
    shared = min(comparison.shared_segments, len(earlier), len(prompt.ends))
    ends = [
        prompt.ends[position]
        for position in range(shared)
        if earlier[position].breakpoint is not None
    ]
    return max((end for end in ends if end >= minimum), default=0)


DIALECTS: dict[str, Dialect[Any]] = {
    "deepseek": ChatDialect(
        unknown_status=400,
        unknown_code="invalid_request_error",
        unknown_wording="Model Not Exist: {quoted}",
    ),
    "openai": ChatDialect(
        unknown_status=404,
        unknown_code="model_not_found",
        unknown_wording=(
            "The model `{model}` does not exist or you do not have access to it."
        ),
    ),
    "anthropic": MessagesDialect(),
    "openai-responses": ResponsesDialect(),
}
"""Every dialect the fake speaks, by the name a profile gives."""


def dialect_serving(path: str) -> Dialect[Any] | None:
    """The first dialect (in table order) that serves `path`, if any."""
    for dialect in DIALECTS.values():
        if path in dialect.paths:
            return dialect
    return None
