"""Anthropic messages as a `Dialect`: what the provider core asks of it.

The wire format itself is in `reqfold.fakes.dialects.anthropic`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from reqfold.fakes.diagnostics import Comparison, DivergenceLedger
from reqfold.fakes.dialects import anthropic
from reqfold.fakes.dialects.base import (
    Accounting,
    Answer,
    CacheState,
    Dialect,
    served_hint,
)
from reqfold.fakes.dialects.common import output_tokens
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
from reqfold.fakes.prompt import RenderedPrompt, Segment
from reqfold.fakes.routes import RequestTexts
from reqfold.fakes.script import Fault, Reply


@dataclass(frozen=True, slots=True)
class MessagesDialect(Dialect[anthropic.MessagesCall]):
    """Anthropic messages (explicit `cache_control` breakpoints)."""

    wire: str = anthropic.WIRE
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
