"""The fake caching provider: one stateful, I/O-free core behind every shell.

`FakeProvider.handle(HttpRequest) -> ResponsePlan` is the whole engine for
the provider endpoints (`fakes.routing` puts the `/_fake/` control surface
in front of it). It validates the body, asks the script for an action,
does the cache accounting, renders the dialect's response and records a
capture. It never performs I/O, never reads the wall clock (the
`LogicalClock` is only moved by tests) and uses no randomness, so the same
requests always get the same bytes back.

Order of operations for one provider request, top to bottom:

1. route by method and path (unknown path 404, wrong method 405);
2. without the lock (it depends on the request alone): reject bodies over
   `max_body_bytes` (413), bad JSON or schema (400), a model the profile
   does not serve (the dialect's unknown-model error); render the prompt
   segments, tokenize them and hash the cache blocks;
3. under the lock, from here on: take the request index and the scripted
   action; a `Fault` is answered now and changes no cache state (the real
   provider rejected the request before prefill);
4. look up and insert the cache entries, compare with the closest earlier
   request;
5. render the response (JSON or SSE frames) with the dialect's usage;
6. record the request in the ledger (for later diagnostics) and capture.

So a large request is tokenized while other requests are answered, and
concurrent requests from any number of threads or tasks keep the cache
index, the ledger and the capture log consistent. The shells
(`fakes.app`, `fakes.transport`) only play the plan back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from fakes.cache_index import PrefixCacheIndex, block_keys, partition_root
from fakes.capture import (
    DEFAULT_MAX_BYTES as DEFAULT_CAPTURE_BYTES,
    CapturedRequest,
    CaptureLog,
)
from fakes.clock import LogicalClock
from fakes.diagnostics import (
    DEFAULT_MAX_BYTES as DEFAULT_LEDGER_BYTES,
    Comparison,
    Diagnostic,
    DivergenceLedger,
)
from fakes.dialects import anthropic, openai_chat
from fakes.dialects.common import EPOCH, output_tokens
from fakes.errors import InvalidRequest
from fakes.gate import Gate
from fakes.http import SSE_HEADERS, HttpRequest, ResponsePlan, json_headers
from fakes.jsontypes import (
    JSONObject,
    JSONValue,
    dumps_compact,
    has_lone_surrogate,
    json_object,
)
from fakes.profiles import Profile, get_profile
from fakes.prompt import RenderedPrompt, Segment, render_prompt
from fakes.script import Action, Fault, Reply, Responder, Script, ScriptedRequest
from fakes.stats import CaptureStats, ProviderStats
from fakes.tokenizer import SegmentEncoder

Route = Literal["chat", "messages"]


class FakeProvider:
    """A deterministic fake LLM provider that simulates prompt caching.

    Args:
        profile: a `Profile` or a built-in dialect name (`"deepseek"`,
            `"openai"`, `"anthropic"`).
        clock: the logical clock cache lifetimes are measured on.
        capture_limit: keep at most this many captured requests.
        capture_max_bytes: keep captured requests whose raw bodies add up
            to at most this many bytes (the newest is always kept); `None`
            for no bound. Dropped records are counted in `stats().capture`.
        ledger_max_bytes: the diagnostics ledger remembers earlier prompts
            of at most this many body bytes (the newest always); `None`
            for no bound.
        **overrides: `Profile` fields to replace (`block_size=128`,
            `ttl=300`, `capacity_tokens=10_000`, ...).
    """

    def __init__(
        self,
        profile: Profile | str = "deepseek",
        *,
        clock: LogicalClock | None = None,
        capture_limit: int | None = None,
        capture_max_bytes: int | None = DEFAULT_CAPTURE_BYTES,
        ledger_max_bytes: int | None = DEFAULT_LEDGER_BYTES,
        **overrides: Any,
    ) -> None:
        base = get_profile(profile) if isinstance(profile, str) else profile
        self._profile = dataclasses.replace(base, **overrides) if overrides else base
        self.clock = clock if clock is not None else LogicalClock()
        self.script = Script()
        self.capture = CaptureLog(capture_limit, capture_max_bytes)
        self.index = self._new_index()
        self.ledger = DivergenceLedger(ledger_max_bytes)
        self.encoder = SegmentEncoder()
        self._lock = threading.RLock()
        self._gates: dict[str, Gate] = {}
        self._next_index = 0
        self._totals = _Totals()

    def __repr__(self) -> str:
        dialect = self._profile.dialect
        return f"FakeProvider(dialect={dialect!r}, requests={self._next_index})"

    @property
    def profile(self) -> Profile:
        """The profile in force."""
        return self._profile

    def _new_index(self) -> PrefixCacheIndex:
        return PrefixCacheIndex(
            capacity_tokens=self._profile.capacity_tokens,
            refresh_on_hit=self._profile.refresh_on_hit,
            max_age=self._profile.max_age,
        )

    # --- Python control API --------------------------------------------------

    def push(self, *actions: Action) -> None:
        """Queue replies or faults for the next requests, in order."""
        with self._lock:
            self.script.push(*actions)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer unscripted requests with `responder(request)`."""
        with self._lock:
            self.script.respond_with(responder)

    def gate(self, name: str) -> Gate:
        """The named gate (created closed on first use)."""
        with self._lock:
            gate = self._gates.get(name)
            if gate is None:
                gate = self._gates[name] = Gate(name)
            return gate

    def advance(self, seconds: float) -> float:
        """Advance the logical clock; returns the new time."""
        with self._lock:
            return self.clock.advance(seconds)

    def reset(
        self,
        *,
        cache: bool = True,
        capture: bool = True,
        script: bool = True,
        clock: bool = False,
    ) -> None:
        """Forget cache entries, captures, scripted actions and/or time."""
        with self._lock:
            if cache:
                self.index.clear()
                self.ledger.clear()
            if capture:
                self.capture.clear()
                self._totals = _Totals()
                # Ids derive from (seed, index): numbering restarts with the
                # captures so the same requests get the same bytes again.
                self._next_index = 0
            if script:
                self.script.clear()
                # Keep the gate objects (tests may hold them) but release what
                # they hold and close them again, as if newly created.
                for gate in self._gates.values():
                    gate.reset()
            if clock:
                self.clock = LogicalClock()

    def configure(self, **overrides: Any) -> Profile:
        """Replace profile fields; index settings apply to new entries.

        Changing the dialect is refused: start a new provider instead.
        """
        with self._lock:
            if "dialect" in overrides and overrides["dialect"] != self._profile.dialect:
                raise ValueError("the dialect of a running provider cannot change")
            # Build (and so validate) the whole new profile before touching
            # any state: a rejected change leaves the provider as it was.
            profile = dataclasses.replace(self._profile, **overrides)
            self._profile = profile
            self.index.capacity_tokens = self._profile.capacity_tokens
            self.index.refresh_on_hit = self._profile.refresh_on_hit
            self.index.max_age = self._profile.max_age
            self.index.evict()
            return self._profile

    def pending(self) -> list[Action]:
        """The queued actions, next first."""
        with self._lock:
            return self.script.pending()

    def captured(self, index: int) -> CapturedRequest | None:
        """The captured request with index `index`, if still kept."""
        with self._lock:
            return self.capture.by_index(index)

    @property
    def requests(self) -> list[CapturedRequest]:
        """Every captured request, in arrival order."""
        with self._lock:
            return list(self.capture)

    @property
    def last_request(self) -> CapturedRequest:
        """The most recent captured request."""
        with self._lock:
            if not len(self.capture):
                raise LookupError("the fake provider has not received any request yet")
            return self.capture[-1]

    def diagnostics(self) -> list[Diagnostic]:
        """Diagnostics of every answered request, in arrival order."""
        return [r.diagnostic for r in self.requests if r.diagnostic is not None]

    def capture_jsonl(self) -> str:
        """The capture log as JSONL text."""
        with self._lock:
            return self.capture.to_jsonl()

    def stats(self) -> ProviderStats:
        """Totals since the last reset."""
        with self._lock:
            totals = self._totals
            return ProviderStats(
                requests=totals.requests,
                answered=totals.answered,
                errors=totals.errors,
                prompt_tokens=totals.prompt,
                cached_tokens=totals.cached,
                cache_write_tokens=totals.written,
                hit_ratio=_ratio(totals.cached, totals.prompt),
                warm_hit_ratio=_ratio(
                    totals.cached, totals.prompt - totals.first_prompt
                ),
                clock=self.clock.now(),
                index=self.index.stats(),
                capture=CaptureStats(
                    requests=len(self.capture),
                    bytes=self.capture.bytes,
                    max_requests=self.capture.max_records,
                    max_bytes=self.capture.max_bytes,
                    dropped_requests=self.capture.dropped,
                    dropped_bytes=self.capture.dropped_bytes,
                ),
                forgotten_prompts=self.ledger.forgotten,
            )

    def count_prompt_tokens(self, body: JSONValue) -> int:
        """Prompt tokens the fake would count for this request body."""
        return render_prompt(self.prompt_segments(body), self.encoder).n_tokens

    def prompt_segments(self, body: JSONValue) -> list[Segment]:
        """The prompt segments of a request body, in the profile's order.

        Raises:
            InvalidRequest: the body is not a valid request of the dialect.
        """
        profile = self._profile
        call = self._parse_call(body, profile)
        if isinstance(call, openai_chat.ChatCall):
            return openai_chat.chat_segments(call, profile.render_order)
        return anthropic.messages_segments(call, profile.render_order)

    # --- the core --------------------------------------------------------------

    def handle(self, request: HttpRequest) -> ResponsePlan:
        """Answer one provider request.

        Only the provider endpoints: `fakes.routing.serve_request` adds the
        control surface under `/_fake/` in front of this. The work that
        depends on the request alone (parsing, validation, rendering and
        tokenizing the prompt) runs without the lock, so one large request
        does not hold up the others; what touches shared state (the
        request index, the script, the cache index, the ledger, the
        capture) runs under the lock, atomically.
        """
        route = self._route(request.path)
        refused = self._refuse_route(request, route)
        if refused is not None:
            return refused
        profile = self._profile
        try:
            prepared = self._prepare(request, profile)
        except Exception as error:
            with self._lock:
                index, now = self._take_index()
                self._record_crash(request, index, now, error)
            raise
        with self._lock:
            index, now = self._take_index()
            try:
                return self._answer_provider(request, index, now, prepared)
            except Exception as error:
                self._record_crash(request, index, now, error)
                raise

    def _route(self, path: str) -> Route | None:
        if path in openai_chat.CHAT_PATHS:
            return "chat"
        if path in anthropic.MESSAGES_PATHS:
            return "messages"
        return None

    def _error_plan(
        self,
        status: int,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> tuple[ResponsePlan, JSONObject]:
        body: JSONObject
        if self._profile.dialect == "anthropic":
            if error_type == "invalid_request_error":
                error_type = anthropic.FAULT_TYPES.get(status, error_type)
            body = json_object(
                anthropic.messages_error_body(message, error_type=error_type)
            )
        else:
            body = json_object(
                openai_chat.chat_error_body(
                    message, error_type=error_type, param=param, code=code
                )
            )
        raw = dumps_compact(body).encode("utf-8")
        plan = ResponsePlan(
            status=status, headers=json_headers(len(raw), *headers), chunks=(raw,)
        )
        return plan, body

    def _refuse_route(
        self, request: HttpRequest, route: Route | None
    ) -> ResponsePlan | None:
        if route is None:
            plan, _ = self._error_plan(
                404,
                f"Unknown request URL: {request.method} {request.path}. "
                "The fake serves POST /chat/completions, POST /v1/chat/completions, "
                "POST /v1/messages and the control surface under /_fake/.",
                code="unknown_url",
            )
            return plan
        if request.method != "POST":
            plan, _ = self._error_plan(
                405,
                f"Method {request.method} is not allowed on {request.path}; use POST.",
                code="method_not_allowed",
                headers=(("allow", "POST"),),
            )
            return plan
        wanted = "anthropic" if route == "messages" else "chat completions"
        if (route == "messages") != (self._profile.dialect == "anthropic"):
            plan, _ = self._error_plan(
                404,
                f"This fake speaks the {self._profile.dialect} dialect; {request.path} "
                f"needs a provider started with the {wanted} dialect "
                "(reqfold fake serve --dialect ...).",
                code="unknown_url",
            )
            return plan
        return None

    def _take_index(self) -> tuple[int, float]:
        index = self._next_index
        self._next_index += 1
        self._totals.requests += 1
        return index, self.clock.now()

    def _record_crash(
        self, request: HttpRequest, index: int, now: float, error: Exception
    ) -> None:
        # A bug (or a raising responder) must not eat an index silently:
        # record the crash as a 500 under its index, leaving the body out
        # (it may be what broke); the caller lets the exception propagate.
        _, reply = self._error_plan(
            500,
            f"The fake provider crashed on this request: {error!r}"[:500],
            error_type="api_error",
        )
        self._totals.errors += 1
        self._record(request, index, None, 500, now, reply, None, None)

    def _prepare(self, request: HttpRequest, profile: Profile) -> _Prepared:
        """Everything that depends on the request alone (no shared state)."""
        body: JSONValue = None
        try:
            body = self._parse_body(request, profile)
            call = self._parse_call(body, profile)
            if not profile.serves(call.model):
                raise unknown_model(profile, call.model)
            prompt = self._render(call, profile)
        except InvalidRequest as error:
            return _Prepared(body=body, error=error)
        root = self._partition(request, call.model, call.body, profile)
        keys: list[bytes] = []
        if isinstance(call, openai_chat.ChatCall):
            # One BLAKE2b per block: for a large prompt, seconds of work
            # better done before taking the lock.
            keys = block_keys(root, prompt.tokens, profile.block_size)
        return _Prepared(
            body=body, call=call, prompt=prompt, root=root, keys=keys, profile=profile
        )

    def _render(
        self, call: openai_chat.ChatCall | anthropic.MessagesCall, profile: Profile
    ) -> RenderedPrompt:
        if isinstance(call, openai_chat.ChatCall):
            segments = openai_chat.chat_segments(call, profile.render_order)
        else:
            segments = anthropic.messages_segments(call, profile.render_order)
            anthropic.check_breakpoints(segments, profile.breakpoint_limit)
        return render_prompt(segments, self.encoder)

    def _answer_provider(
        self, request: HttpRequest, index: int, now: float, prepared: _Prepared
    ) -> ResponsePlan:
        body, call, prompt = prepared.body, prepared.call, prepared.prompt
        if prepared.error is not None or call is None or prompt is None:
            error = prepared.error or InvalidRequest("the request was not prepared")
            return self._reject(request, index, body, now, error)
        assert isinstance(body, dict)
        scripted = ScriptedRequest(
            index=index, path=request.path, dialect=self._profile.dialect, body=body
        )
        action = self.script.next_action(
            scripted, Reply(text=self._profile.default_text)
        )
        if isinstance(action, Fault):
            return self._fault(request, index, body, now, action)
        if prepared.profile is not self._profile:
            # The profile changed while this request was being prepared:
            # partition and block keys follow the profile now in force.
            prepared = self._prepare(request, self._profile)
            if prepared.error is not None:
                return self._reject(request, index, body, now, prepared.error)
        if isinstance(call, openai_chat.ChatCall):
            return self._answer_chat(request, index, call, action, now, prepared)
        return self._answer_messages(request, index, call, action, now, prepared)

    def _parse_body(self, request: HttpRequest, profile: Profile) -> JSONValue:
        limit = profile.max_body_bytes
        if len(request.body) > limit:
            raise InvalidRequest(
                f"Request body exceeds the limit of {limit} bytes "
                f"(received at least {len(request.body)}).",
                status=413,
            )
        return parse_json_body(request.body)

    def _parse_call(
        self, body: JSONValue, profile: Profile
    ) -> openai_chat.ChatCall | anthropic.MessagesCall:
        if profile.dialect == "anthropic":
            return anthropic.parse_messages_request(body)
        return openai_chat.parse_chat_request(body)

    def _reject(
        self,
        request: HttpRequest,
        index: int,
        body: JSONValue,
        now: float,
        error: InvalidRequest,
    ) -> ResponsePlan:
        plan, reply = self._error_plan(
            error.status,
            error.message,
            error_type=error.error_type,
            param=error.param,
            code=error.code,
        )
        self._totals.errors += 1
        self._record(request, index, body, plan.status, now, reply, None, None)
        return plan

    def _fault(
        self,
        request: HttpRequest,
        index: int,
        body: JSONValue,
        now: float,
        fault: Fault,
    ) -> ResponsePlan:
        reply: JSONObject
        if self._profile.dialect == "anthropic":
            reply = json_object(
                anthropic.messages_fault_body(
                    fault.status, fault.message, fault.error_type
                )
            )
        else:
            reply = json_object(
                openai_chat.chat_fault_body(
                    fault.status, fault.message, fault.error_type
                )
            )
        extra: tuple[tuple[str, str], ...] = ()
        if fault.retry_after is not None:
            extra = (("retry-after", _seconds(fault.retry_after)),)
        raw = dumps_compact(reply).encode("utf-8")
        plan = ResponsePlan(
            status=fault.status,
            headers=json_headers(len(raw), *extra),
            chunks=(raw,),
            delay=fault.delay,
            hold=self._resolve_hold(fault.hold),
        )
        self._totals.errors += 1
        self._record(request, index, body, fault.status, now, reply, None, None)
        return plan

    def _resolve_hold(self, hold: Gate | str | None) -> Gate | None:
        if isinstance(hold, str):
            return self.gate(hold)
        return hold

    def _partition(
        self, request: HttpRequest, model: str, body: JSONObject, profile: Profile
    ) -> bytes:
        parts = [profile.dialect, model]
        if profile.isolate_api_keys:
            parts.append("key:" + api_key_digest(request))
        parts.extend(
            f"{name}={dumps_compact(body[name])}"
            for name in profile.isolation_fields
            if name in body
        )
        return partition_root(*parts)

    def _account_blocks(
        self, keys: list[bytes], prompt: RenderedPrompt, model: str, now: float
    ) -> tuple[int, int]:
        profile = self._profile
        size = profile.block_size
        n = prompt.n_tokens
        matched = self.index.match_chain(keys, now) * size
        cached = self.cache_rule(matched, n, model)
        for key in keys[: cached // size]:
            self.index.touch(key, now)
        if n >= profile.minimum_for(model) and keys:
            ends = [(position + 1) * size for position in range(len(keys))]
            self.index.insert_chain(keys, ends, [size] * len(keys), now, profile.ttl)
        return cached, matched

    def cache_rule(self, matched: int, n: int, model: str) -> int:
        """Cached tokens reported for a prompt of `n` tokens matching `matched`.

        `floor(min(matched, cap) / block) * block`, or 0 below the minimum,
        with `cap = n - 1` when the profile withholds the last token.
        """
        profile = self._profile
        cap = n - 1 if profile.withhold_last_token else n
        hit = (max(0, min(matched, cap)) // profile.block_size) * profile.block_size
        return hit if hit >= max(profile.minimum_for(model), 1) else 0

    def _answer_chat(
        self,
        request: HttpRequest,
        index: int,
        call: openai_chat.ChatCall,
        reply: Reply,
        now: float,
        prepared: _Prepared,
    ) -> ResponsePlan:
        profile = self._profile
        root, prompt = prepared.root, prepared.prompt
        assert prompt is not None
        comparison = self.ledger.compare(root, prompt)
        cached, matched = self._account_blocks(prepared.keys, prompt, call.model, now)
        expected = self.cache_rule(
            comparison.shared_tokens, prompt.n_tokens, call.model
        )
        completion, reasoning = output_tokens(reply)
        usage = openai_chat.chat_usage(
            profile,
            prompt=prompt.n_tokens,
            cached=cached,
            completion=completion,
            reasoning=reasoning,
        )
        answer = openai_chat.ChatAnswer(
            profile=profile,
            index=index,
            created=EPOCH + int(now),
            model=call.model,
            reply=reply,
            call_ids=openai_chat.chat_call_ids(profile, index, reply),
            usage=usage,
        )
        diagnostic = make_diagnostic(prompt, cached, matched, expected, comparison)
        emitted = openai_chat.emitted_message(answer)
        if call.stream:
            frames = openai_chat.chat_stream_frames(answer, call.include_usage)
            plan = self._stream_plan(frames, reply, openai_chat.KEEPALIVE_FRAME)
        else:
            plan = self._json_plan(openai_chat.chat_completion(answer), reply)
        self.ledger.record(root, index, prompt, emitted, weight=len(request.body))
        self._count(prompt.n_tokens, cached, 0, comparison)
        self._record(
            request,
            index,
            call.body,
            plan.status,
            now,
            emitted,
            json_object(usage),
            diagnostic,
        )
        return plan

    def _answer_messages(
        self,
        request: HttpRequest,
        index: int,
        call: anthropic.MessagesCall,
        reply: Reply,
        now: float,
        prepared: _Prepared,
    ) -> ResponsePlan:
        profile = self._profile
        root, prompt = prepared.root, prepared.prompt
        assert prompt is not None
        comparison = self.ledger.compare(root, prompt)
        result = anthropic.account_breakpoints(
            self.index,
            root,
            prompt,
            now=now,
            minimum=profile.minimum_for(call.model),
            lookback=profile.lookback_blocks,
            ttl_short=profile.ttl,
            ttl_long=profile.ttl_long,
        )
        completion, _ = output_tokens(reply)
        usage = anthropic.messages_usage(result, completion)
        answer = anthropic.MessagesAnswer(
            profile=profile,
            index=index,
            model=call.model,
            reply=reply,
            tool_ids=anthropic.tool_use_ids(profile, index, reply),
            usage=usage,
        )
        cached = result.read
        expected = self._anthropic_expected(
            prompt, comparison, profile.minimum_for(call.model)
        )
        diagnostic = make_diagnostic(
            prompt, cached, result.matched, min(expected, result.cacheable), comparison
        )
        emitted = anthropic.emitted_message(answer)
        if call.stream:
            frames = anthropic.messages_stream_frames(answer)
            plan = self._stream_plan(frames, reply, anthropic.PING_FRAME)
        else:
            plan = self._json_plan(anthropic.messages_body(answer), reply)
        self.ledger.record(root, index, prompt, emitted, weight=len(request.body))
        self._count(prompt.n_tokens, cached, result.written_total, comparison)
        self._record(
            request,
            index,
            call.body,
            plan.status,
            now,
            emitted,
            json_object(usage),
            diagnostic,
        )
        return plan

    def _anthropic_expected(
        self, prompt: RenderedPrompt, comparison: Comparison, minimum: int
    ) -> int:
        """Tokens the closest earlier request left in the cache for this one.

        Only breakpoint blocks are ever written: the end of the deepest
        marker (long enough to be cached) among the segments both requests
        share, not the whole shared prefix.
        """
        if comparison.closest_request is None:
            return 0
        earlier = self.ledger.segments_of(comparison.closest_request)
        shared = min(comparison.shared_segments, len(earlier), len(prompt.ends))
        ends = [
            prompt.ends[position]
            for position in range(shared)
            if earlier[position].breakpoint is not None
        ]
        return max((end for end in ends if end >= minimum), default=0)

    def _stream_plan(
        self, frames: list[bytes], reply: Reply, keepalive: bytes
    ) -> ResponsePlan:
        cut = reply.cut_after is not None and reply.cut_after < len(frames)
        if reply.cut_after is not None:
            frames = frames[: reply.cut_after]
        chunks = [keepalive] * reply.keepalives + frames
        return ResponsePlan(
            status=200,
            headers=SSE_HEADERS,
            chunks=tuple(chunks),
            streaming=True,
            delay=reply.delay,
            hold=self._resolve_hold(reply.hold),
            cut=cut,
        )

    def _json_plan(self, body: JSONObject, reply: Reply) -> ResponsePlan:
        raw = dumps_compact(body).encode("utf-8")
        headers = json_headers(len(raw))
        cut = reply.cut_after is not None
        if cut:
            raw = raw[: len(raw) // 2]
        return ResponsePlan(
            status=200,
            headers=headers,
            chunks=(raw,),
            delay=reply.delay,
            hold=self._resolve_hold(reply.hold),
            cut=cut,
        )

    def _count(
        self, prompt: int, cached: int, written: int, comparison: Comparison
    ) -> None:
        totals = self._totals
        totals.answered += 1
        totals.prompt += prompt
        totals.cached += cached
        totals.written += written
        if comparison.relation == "first":
            totals.first_prompt += prompt

    def _record(
        self,
        request: HttpRequest,
        index: int,
        body: JSONValue,
        status: int,
        now: float,
        reply: JSONValue,
        usage: JSONObject | None,
        diagnostic: Diagnostic | None,
    ) -> None:
        self.capture.append(
            CapturedRequest(
                index=index,
                method=request.method,
                path=request.path,
                headers=request.redacted_headers(),
                raw_body=request.body,
                body=body,
                status=status,
                at=now,
                reply=reply,
                usage=usage,
                diagnostic=diagnostic,
                key=api_key_digest(request),
            )
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Prepared:
    """A provider request parsed, validated and tokenized, or why not."""

    body: JSONValue
    call: openai_chat.ChatCall | anthropic.MessagesCall | None = None
    prompt: RenderedPrompt | None = None
    root: bytes = b""
    keys: list[bytes] = dataclasses.field(default_factory=list)
    profile: Profile | None = None
    error: InvalidRequest | None = None


@dataclass(slots=True)
class _Totals:
    requests: int = 0
    answered: int = 0
    errors: int = 0
    prompt: int = 0
    cached: int = 0
    written: int = 0
    first_prompt: int = 0


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole > 0 else 0.0


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _reject_constant(name: str) -> object:
    raise InvalidRequest(
        f"the request body is not valid JSON: {name} is not a JSON value"
    )


def parse_json_body(raw: bytes) -> JSONValue:
    """Parse a request body as strict JSON (no NaN/Infinity).

    Raises:
        InvalidRequest: the body is empty, not UTF-8, or not JSON.
    """
    if not raw.strip():
        raise InvalidRequest("the request body is empty; expected a JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidRequest(
            f"the request body is not valid UTF-8 (byte {error.start})"
        ) from None
    try:
        value: JSONValue = json.loads(
            text, parse_constant=_reject_constant, parse_float=_finite_float
        )
    except json.JSONDecodeError as error:
        raise InvalidRequest(
            f"the request body is not valid JSON: {error.msg} at line {error.lineno} "
            f"column {error.colno}"
        ) from None
    except RecursionError:
        raise InvalidRequest("the request body is nested too deeply") from None
    except ValueError as error:
        # e.g. an integer literal longer than Python's int conversion limit
        raise InvalidRequest(
            f"the request body is not acceptable JSON: {error}"
        ) from None
    _reject_lone_surrogates(value)
    return value


def _finite_float(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):
        raise InvalidRequest(
            f"the request body is not valid JSON: the number {literal[:40]} "
            "is out of range (not a finite double)"
        )
    return number


def _reject_lone_surrogates(value: JSONValue) -> None:
    """Refuse strings (keys or values) holding an unpaired UTF-16 surrogate.

    JSON allows `\\ud800` escapes, but the text is not valid Unicode: it
    cannot be encoded as UTF-8 in a reply or in the capture log.
    """
    stack: list[JSONValue] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings: Iterable[str] = (item,)
        elif isinstance(item, dict):
            strings = item.keys()
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        else:
            continue
        for text in strings:
            if has_lone_surrogate(text):
                raise InvalidRequest(
                    "the request body is not valid JSON text: a string contains "
                    "an unpaired UTF-16 surrogate escape"
                )


def api_key_digest(request: HttpRequest) -> str:
    """A digest of the request's API key (never the key itself)."""
    key = request.header("x-api-key") or request.header("api-key") or ""
    authorization = request.header("authorization")
    if authorization:
        scheme, _, token = authorization.partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else authorization
    return key_digest(key)


def key_digest(key: str) -> str:
    """The digest the capture records for API key `key` (16 hex digits)."""
    return hashlib.blake2b(
        key.encode("utf-8", "surrogatepass"), digest_size=8
    ).hexdigest()


def unknown_model(profile: Profile, model: str) -> InvalidRequest:
    """The error the real provider answers for a model it does not serve.

    DeepSeek: 400 "Model Not Exist"; OpenAI: 404 `model_not_found`;
    Anthropic: 404 `not_found_error` "model: NAME". The message also names
    the models this fake serves.
    """
    served = ", ".join(profile.models) or "none"
    hint = (
        f" (this fake serves: {served}; add models with --model or "
        "the 'models' profile field)"
    )
    if profile.dialect == "anthropic":
        return InvalidRequest(
            f"model: {model}{hint}", status=404, error_type="not_found_error"
        )
    if profile.dialect == "openai":
        return InvalidRequest(
            f"The model `{model}` does not exist or you do not have access to it."
            + hint,
            status=404,
            param="model",
            code="model_not_found",
        )
    return InvalidRequest(
        f"Model Not Exist: {model!r}{hint}",
        param="model",
        code="invalid_request_error",
    )


def make_diagnostic(
    prompt: RenderedPrompt,
    cached: int,
    matched: int,
    expected: int,
    comparison: Comparison,
) -> Diagnostic:
    """Assemble the per-request diagnostic."""
    return Diagnostic(
        prompt_tokens=prompt.n_tokens,
        cached_tokens=cached,
        uncached_tokens=prompt.n_tokens - cached,
        matched_tokens=matched,
        lost_tokens=max(0, expected - cached),
        relation=comparison.relation,
        closest_request=comparison.closest_request,
        shared_tokens=comparison.shared_tokens,
        divergence=comparison.divergence,
        echo_divergence=comparison.echo_divergence,
    )


def replies(values: Iterable[str]) -> list[Reply]:
    """Text replies, one per string (a shorthand for scripts)."""
    return [Reply(text=value) for value in values]
