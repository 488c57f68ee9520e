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
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from reqfold.fakes.cache_index import PrefixCacheIndex
from reqfold.fakes.diagnostics import Comparison, DivergenceLedger
from reqfold.fakes.dialects import (
    anthropic,
    openai_chat,
    responses,
    responses_output,
)
from reqfold.fakes.dialects.common import EPOCH, output_tokens
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo, render_messages
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue, dumps_compact, json_object
from reqfold.fakes.native_diagnostics import (
    NOT_ASKED,
    Fingerprint,
    FingerprintStore,
    NativeDiagnosis,
    anthropic_cache_miss,
    responses_cache_diagnostics,
)
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import (
    RenderedPrompt,
    Segment,
    render_prompt,
)
from reqfold.fakes.script import Fault, Reply
from reqfold.fakes.tokenizer import SegmentEncoder

CallT = TypeVar(
    "CallT", openai_chat.ChatCall, anthropic.MessagesCall, responses.ResponsesCall
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Accounting:
    """What the cache did with one prompt, in tokens."""

    usage: JsonObject
    cached: int
    matched: int
    expected: int  # what the closest earlier request left cached for this one
    written: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Answer:
    """A rendered answer: the message a harness sends back, and the bytes."""

    emitted: JsonObject
    body: JsonObject | None  # a JSON answer
    frames: list[bytes] | None  # a streamed answer
    keepalive: bytes
    answer_id: str = ""  # the id a later request names this answer by
    conversation: tuple[JsonValue, ...] | None = None  # kept for continuations


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheState:
    """The provider's shared cache state a dialect accounts against."""

    index: PrefixCacheIndex
    ledger: DivergenceLedger
    now: float


class Dialect(ABC, Generic[CallT]):
    """What one wire dialect does differently from the others."""

    family: str
    """The name a user passes to pick a dialect of this kind."""
    paths: tuple[str, ...]
    uses_block_keys: bool
    """Whether its cache accounting needs the prompt's block keys."""

    @abstractmethod
    def parse(self, body: JsonValue) -> CallT:
        """Validate a parsed body (raises `InvalidRequest`)."""

    @abstractmethod
    def segments(self, call: CallT, profile: Profile) -> list[Segment]:
        """The prompt segments of a call, in the profile's render order."""

    def check(self, segments: list[Segment], profile: Profile) -> None:
        """Refuse segments the real API refuses (raises `InvalidRequest`)."""

    def expand(self, call: CallT, conversations: responses.ConversationStore) -> CallT:
        """The call with the conversation state the provider keeps for it
        (raises `InvalidRequest` when it names state that is not kept)."""
        return call

    def settings(self, call: CallT) -> dict[str, str]:
        """Settings outside the prompt the provider's own cache diagnostics
        compare (`prompt_cache_key`), as compact JSON."""
        return {}

    def diagnoses(self, call: CallT) -> bool:
        """Whether the provider's own cache diagnostics see this request (it
        asks, or a later one may name it): only then is it fingerprinted."""
        return False

    def native_diagnosis(
        self, call: CallT, current: Fingerprint, fingerprints: FingerprintStore
    ) -> NativeDiagnosis:
        """What the provider's own cache diagnostics make of this request
        (nothing unless the request asks)."""
        return NOT_ASKED

    def render(
        self,
        call: CallT,
        profile: Profile,
        encoder: SegmentEncoder,
        messages: MessagePrefixMemo | None,
    ) -> RenderedPrompt:
        """The checked, tokenized prompt of a call (strict JSON values).

        `messages` may hold the rendered messages of recent prompts; the
        result is the same with or without it.
        """
        segments = self.segments(call, profile)
        self.check(segments, profile)
        return render_prompt(segments, encoder, by_value=True)

    @abstractmethod
    def account(
        self,
        state: CacheState,
        call: CallT,
        prompt: RenderedPrompt,
        keys: list[bytes],
        root: bytes,
        comparison: Comparison,
        reply: Reply,
        profile: Profile,
    ) -> Accounting:
        """Look the prompt up in the cache and write it; the usage to report."""

    @abstractmethod
    def answer(
        self,
        profile: Profile,
        index: int,
        call: CallT,
        reply: Reply,
        now: float,
        usage: JsonObject,
        native: JsonObject | None = None,
    ) -> Answer:
        """Render a successful answer (`native`: members the provider's own
        cache diagnostics add)."""

    @abstractmethod
    def error_body(
        self,
        status: int,
        message: str,
        *,
        error_type: str,
        param: str | None,
        code: str | None,
    ) -> JsonObject:
        """The dialect's error envelope."""

    @abstractmethod
    def fault_body(self, fault: Fault) -> JsonObject:
        """The error body a scripted fault sends."""

    @abstractmethod
    def unknown_model(self, profile: Profile, model: str) -> InvalidRequest:
        """The error the real provider answers for a model it does not serve."""


def _served(profile: Profile) -> str:
    served = ", ".join(profile.models) or "none"
    return (
        f" (this fake serves: {served}; add models with --model or "
        "the 'models' profile field)"
    )


def cache_rule(profile: Profile, matched: int, n: int, model: str) -> int:
    """Cached tokens reported for a prompt of `n` tokens matching `matched`.

    `floor(min(matched, cap) / block) * block`, or 0 below the minimum,
    with `cap = n - 1` when the profile withholds the last token.
    """
    cap = n - 1 if profile.withhold_last_token else n
    hit = (max(0, min(matched, cap)) // profile.block_size) * profile.block_size
    return hit if hit >= max(profile.minimum_for(model), 1) else 0


def account_blocks(
    state: CacheState,
    model: str,
    prompt: RenderedPrompt,
    keys: list[bytes],
    comparison: Comparison,
    profile: Profile,
) -> tuple[int, int, int]:
    """Automatic prefix caching in blocks: (cached, matched, expected) tokens."""
    size, n = profile.block_size, prompt.n_tokens
    # The insert refreshes every key, the hits among them included.
    insert = n >= profile.minimum_for(model) and bool(keys)
    blocks = state.index.account_chain(
        keys, size, state.now, profile.ttl, insert=insert
    )
    matched = blocks * size
    return (
        cache_rule(profile, matched, n, model),
        matched,
        cache_rule(profile, comparison.shared_tokens, n, model),
    )


@dataclass(frozen=True, slots=True)
class ChatDialect(Dialect[openai_chat.ChatCall]):
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

    def error_body(
        self,
        status: int,
        message: str,
        *,
        error_type: str,
        param: str | None,
        code: str | None,
    ) -> JsonObject:
        return json_object(
            openai_chat.chat_error_body(
                message, error_type=error_type, param=param, code=code
            )
        )

    def fault_body(self, fault: Fault) -> JsonObject:
        return json_object(
            openai_chat.chat_fault_body(fault.status, fault.message, fault.error_type)
        )

    def unknown_model(self, profile: Profile, model: str) -> InvalidRequest:
        message = self.unknown_wording.format(model=model, quoted=repr(model))
        return InvalidRequest(
            message + _served(profile),
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
            f"model: {model}{_served(profile)}",
            status=404,
            error_type="not_found_error",
        )


@dataclass(frozen=True, slots=True)
class ResponsesDialect(Dialect[responses.ResponsesCall]):
    """The OpenAI Responses API (automatic prefix cache, stored responses)."""

    family: str = "openai-responses"
    paths: tuple[str, ...] = responses.RESPONSES_PATHS
    uses_block_keys: bool = True

    def parse(self, body: JsonValue) -> responses.ResponsesCall:
        return responses.parse_responses_request(body)

    def expand(
        self, call: responses.ResponsesCall, conversations: responses.ConversationStore
    ) -> responses.ResponsesCall:
        return responses.expand_conversation(call, conversations)

    def segments(
        self, call: responses.ResponsesCall, profile: Profile
    ) -> list[Segment]:
        return responses.responses_segments(call, profile.render_order)

    def settings(self, call: responses.ResponsesCall) -> dict[str, str]:
        settings = {
            f"{name}": dumps_compact(value)
            for name, value in responses.cache_params(call.body).items()
        }
        settings["prompt_cache_key"] = dumps_compact(call.body.get("prompt_cache_key"))
        return settings

    def diagnoses(self, call: responses.ResponsesCall) -> bool:
        return True  # any response may be named as the comparison later

    def native_diagnosis(
        self,
        call: responses.ResponsesCall,
        current: Fingerprint,
        fingerprints: FingerprintStore,
    ) -> NativeDiagnosis:
        options = call.body.get("prompt_cache_options")
        named = (
            options.get("comparison_response_id") if isinstance(options, dict) else None
        )
        if not isinstance(named, str):
            return NativeDiagnosis(kept=True)
        diagnosis = responses_cache_diagnostics(fingerprints.get(named), current)
        return NativeDiagnosis(
            kept=True, members={"prompt_cache_diagnostics": diagnosis}, compared=True
        )

    def account(
        self,
        state: CacheState,
        call: responses.ResponsesCall,
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
        usage = responses_output.responses_usage(
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
        call: responses.ResponsesCall,
        reply: Reply,
        now: float,
        usage: JsonObject,
        native: JsonObject | None = None,
    ) -> Answer:
        diagnosis = (native or {}).get("prompt_cache_diagnostics")
        answer = responses_output.ResponsesAnswer(
            profile=profile,
            index=index,
            created=EPOCH + int(now),
            call=call,
            reply=reply,
            usage=cast(responses_output.ResponsesUsage, usage),
            diagnosis=diagnosis if isinstance(diagnosis, dict) else None,
        )
        stream = call.stream
        items = tuple(responses_output.output_items(answer))
        return Answer(
            emitted=responses_output.emitted_item(answer),
            body=None if stream else responses_output.response_body(answer),
            frames=responses_output.responses_stream_frames(answer) if stream else None,
            keepalive=openai_chat.KEEPALIVE_FRAME,
            answer_id=responses_output.response_id(profile, index),
            conversation=call.items + items if call.store else None,
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
        return json_object(
            openai_chat.chat_error_body(
                message, error_type=error_type, param=param, code=code
            )
        )

    def fault_body(self, fault: Fault) -> JsonObject:
        return json_object(
            openai_chat.chat_fault_body(fault.status, fault.message, fault.error_type)
        )

    def unknown_model(self, profile: Profile, model: str) -> InvalidRequest:
        return InvalidRequest(
            f"The requested model '{model}' does not exist." + _served(profile),
            status=400,
            param="model",
            code="model_not_found",
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
