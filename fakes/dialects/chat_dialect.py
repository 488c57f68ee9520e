"""Chat completions as a `Dialect`: what the provider core asks of it.

One class serves every chat-completions provider; what differs between
them (DeepSeek's and OpenAI's answers, their unknown-model errors) is data
given by the dialect registry (`reqfold.fakes.dialects.registry`). The
wire format itself is in `reqfold.fakes.dialects.openai_chat`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import cast

from reqfold.fakes.diagnostics import Comparison
from reqfold.fakes.dialects import openai_chat
from reqfold.fakes.dialects.base import (
    Accounting,
    Answer,
    CacheState,
    Dialect,
    OpenAIErrorEnvelope,
    account_usage,
    served_hint,
)
from reqfold.fakes.dialects.common import EPOCH
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo, render_messages
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import RenderedPrompt, Segment, render_prompt
from reqfold.fakes.routes import RequestTexts
from reqfold.fakes.script import Reply
from reqfold.fakes.tokenizer import SegmentEncoder

TOOLS_FIRST = ("tools", "system", "messages")
"""The render order in which the conversation is one run at the end."""


@dataclass(frozen=True, slots=True)
class ChatDialect(OpenAIErrorEnvelope[openai_chat.ChatCall]):
    """Chat completions, DeepSeek or OpenAI flavour (automatic prefix cache).

    The flavours differ in data: what the answers look like (`flavour`:
    usage fields, ids, reasoning) and the unknown-model error's status,
    code and wording.
    """

    flavour: openai_chat.ChatFlavour
    unknown_status: int
    unknown_code: str
    unknown_wording: str  # formatted with the model: `{model}`, `{quoted}`
    wire: str = openai_chat.WIRE
    paths: tuple[str, ...] = openai_chat.CHAT_PATHS
    uses_block_keys: bool = True

    def shows_usage(self, usage: JsonObject) -> bool:
        hit_miss = "prompt_cache_hit_tokens" in usage
        if self.flavour.hit_miss_usage:
            return hit_miss
        return not hit_miss and "prompt_tokens_details" in usage

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
        usage = partial(openai_chat.chat_usage, self.flavour)
        return account_usage(
            state, call.model, prompt, keys, comparison, reply, profile, usage
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
            flavour=self.flavour,
            profile=profile,
            index=index,
            created=EPOCH + int(now),
            model=call.model,
            reply=reply,
            call_ids=openai_chat.chat_call_ids(self.flavour, profile, index, reply),
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
