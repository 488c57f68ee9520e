"""The Responses API as a `Dialect`: what the provider core asks of it.

The wire format itself is in `reqfold.fakes.dialects.responses` (requests,
stored conversations, segments) and `responses_output` (answers, events).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from reqfold.fakes.diagnostics import Comparison
from reqfold.fakes.dialects import openai_chat, responses, responses_output
from reqfold.fakes.dialects.base import (
    Accounting,
    Answer,
    CacheState,
    OpenAIErrorEnvelope,
    account_usage,
    served_hint,
)
from reqfold.fakes.dialects.common import EPOCH
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue, dumps_compact
from reqfold.fakes.native_diagnostics import (
    Fingerprint,
    FingerprintStore,
    NativeDiagnosis,
    responses_cache_diagnostics,
)
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import RenderedPrompt, Segment
from reqfold.fakes.routes import RequestTexts
from reqfold.fakes.script import Reply


@dataclass(frozen=True, slots=True)
class ResponsesDialect(OpenAIErrorEnvelope[responses.ResponsesCall]):
    """The OpenAI Responses API (automatic prefix cache, stored responses)."""

    wire: str = responses.WIRE
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

    def texts(self, body: JsonObject) -> RequestTexts:
        return responses.request_texts(body)

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
        return account_usage(
            state,
            call.model,
            prompt,
            keys,
            comparison,
            reply,
            profile,
            responses_output.responses_usage,
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
            emitted=responses_output.emitted_items(answer),
            body=None if stream else responses_output.response_body(answer),
            frames=responses_output.responses_stream_frames(answer) if stream else None,
            keepalive=openai_chat.KEEPALIVE_FRAME,
            answer_id=responses_output.response_id(profile, index),
            conversation=call.items + items if call.store else None,
        )

    def unknown_model(self, profile: Profile, model: str) -> InvalidRequest:
        return InvalidRequest(
            f"The requested model '{model}' does not exist." + served_hint(profile),
            status=400,
            param="model",
            code="model_not_found",
        )
