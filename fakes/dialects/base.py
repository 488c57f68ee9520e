"""What every wire dialect provides: the `Dialect` interface and its helpers.

The provider core asks its dialect (`reqfold.fakes.dialects.registry`) for
everything that differs between wire formats; this module holds the
interface it asks through (`Dialect`), the plain data the answers come in
(`Accounting`, `Answer`, `CacheState`), and what several dialects share:
the automatic-prefix cache rule (`cache_rule`, `account_blocks`), the
OpenAI error envelope (`OpenAIErrorEnvelope`) and the unknown-model hint
(`served_hint`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from reqfold.fakes.cache_index import PrefixCacheIndex
from reqfold.fakes.diagnostics import Comparison, DivergenceLedger
from reqfold.fakes.dialects import openai_chat, responses
from reqfold.fakes.dialects.common import output_tokens
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue, json_object
from reqfold.fakes.native_diagnostics import (
    NOT_ASKED,
    Fingerprint,
    FingerprintStore,
    NativeDiagnosis,
)
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import RenderedPrompt, Segment, render_prompt
from reqfold.fakes.routes import RequestTexts
from reqfold.fakes.script import Fault, Reply
from reqfold.fakes.tokenizer import SegmentEncoder

CallT = TypeVar("CallT")
"""A dialect's validated request (`ChatCall`, `MessagesCall`, ...)."""


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

    wire: str
    """The wire format's name (`chat completions`, `messages`, ...); the
    names a user picks a dialect by are the registry's
    (`reqfold.fakes.dialects.registry`)."""
    paths: tuple[str, ...]
    uses_block_keys: bool
    """Whether its cache accounting needs the prompt's block keys: automatic
    prefix caching in blocks (`account_blocks`); False for caching at the
    request's own breakpoints (Anthropic's `cache_control`)."""

    def shows_usage(self, usage: JsonObject) -> bool:
        """Whether `usage` has the members this dialect's answers report and
        the other dialects on its paths do not (tells a captured answer's
        provider where several serve one path)."""
        return False

    @abstractmethod
    def parse(self, body: JsonValue) -> CallT:
        """Validate a parsed body (raises `InvalidRequest`)."""

    @abstractmethod
    def segments(self, call: CallT, profile: Profile) -> list[Segment]:
        """The prompt segments of a call, in the profile's render order."""

    @abstractmethod
    def texts(self, body: JsonObject) -> RequestTexts:
        """What scripted routes match a valid request body by
        (`reqfold.fakes.routes`)."""

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


class OpenAIErrorEnvelope(Dialect[CallT]):
    """The error bodies of OpenAI's two APIs (chat completions and Responses),
    which answer errors and faults in the same envelope."""

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


def served_hint(profile: Profile) -> str:
    """What an unknown-model error adds: the models served, and how to add one."""
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


class UsageRenderer(Protocol):
    """A dialect's usage object for a prompt of `prompt` tokens, `cached` of
    them from the cache, and the reply's `completion` and `reasoning` tokens."""

    def __call__(
        self, *, prompt: int, cached: int, completion: int, reasoning: int
    ) -> Mapping[str, object]: ...


def account_usage(
    state: CacheState,
    model: str,
    prompt: RenderedPrompt,
    keys: list[bytes],
    comparison: Comparison,
    reply: Reply,
    profile: Profile,
    usage: UsageRenderer,
) -> Accounting:
    """Automatic prefix caching in blocks (`account_blocks`), reported in the
    dialect's usage object (`usage`): what the block-caching dialects account."""
    cached, matched, expected = account_blocks(
        state, model, prompt, keys, comparison, profile
    )
    completion, reasoning = output_tokens(reply)
    rendered = usage(
        prompt=prompt.n_tokens,
        cached=cached,
        completion=completion,
        reasoning=reasoning,
    )
    return Accounting(
        usage=json_object(rendered),
        cached=cached,
        matched=matched,
        expected=expected,
        written=0,
    )
