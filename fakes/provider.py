"""The fake caching provider: one stateful, I/O-free core behind every shell.

`FakeProvider.handle(HttpRequest) -> ResponsePlan` is the whole engine for
the provider endpoints (`reqfold.fakes.routing` puts the `/_fake/` control surface
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
   segments, tokenize the new ones and hash the new cache blocks (the
   memos in `reqfold.fakes.tokenizer` and `reqfold.fakes.block_memo`);
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
(`reqfold.fakes.app`, `reqfold.fakes.transport`) only play the plan back.

What differs between wire formats is asked of the dialect's object
(`reqfold.fakes.dialects.registry`). This module is about 600 lines, above the house's
~500, because it is one class: the lock, the request index and the state
they guard (script, cache index, ledger, capture, totals) belong to one
object, and its Python control API takes the same lock. What needs none of
that state lives elsewhere: parsing (`reqfold.fakes.provider_json`), plans
(`reqfold.fakes.plans`), totals (`reqfold.fakes.stats`), dialects and memos.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from reqfold.fakes.block_memo import BlockKeyMemo
from reqfold.fakes.cache_index import PrefixCacheIndex, partition_root
from reqfold.fakes.capture import (
    DEFAULT_CAPTURE_BYTES,
    CapturedRequest,
    CaptureLog,
    CaptureSnapshot,
    dump_capture_jsonl,
)
from reqfold.fakes.clock import LogicalClock
from reqfold.fakes.diagnostics import (
    DEFAULT_LEDGER_BYTES,
    Diagnostic,
    DivergenceLedger,
    make_diagnostic,
    segment_chain,
)
from reqfold.fakes.dialects.base import CacheState, cache_rule
from reqfold.fakes.dialects.message_memo import MessagePrefixMemo
from reqfold.fakes.dialects.registry import (
    DEFAULT_DIALECT,
    dialect_named,
    get_profile,
    serving_name,
)
from reqfold.fakes.dialects.responses import ConversationStore
from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.gate import Gate
from reqfold.fakes.http import HttpRequest, ResponsePlan, api_key_digest, json_headers
from reqfold.fakes.jsontypes import (
    JsonObject,
    JsonValue,
    dumps_compact,
    json_object,
)
from reqfold.fakes.native_diagnostics import (
    NOT_ASKED,
    FingerprintStore,
    fingerprint,
)
from reqfold.fakes.plans import error_plan, json_plan, stream_plan
from reqfold.fakes.profiles import Profile
from reqfold.fakes.prompt import RenderedPrompt, Segment, render_prompt
from reqfold.fakes.provider_json import parse_json_body
from reqfold.fakes.routes import RequestMatch
from reqfold.fakes.script import (
    Action,
    Fault,
    Reply,
    Responder,
    Script,
    ScriptedRequest,
)
from reqfold.fakes.stats import ProviderStats, Totals
from reqfold.fakes.tokenizer import SegmentEncoder


class FakeProvider:
    """A deterministic fake LLM provider that simulates prompt caching.

    Args:
        profile: a `Profile` or a built-in dialect name (a row of
            `reqfold.fakes.dialects.registry`: `"deepseek"`, `"openai"`,
            `"anthropic"`, `"openai-responses"`); the first row's by default.
        clock: the logical clock cache lifetimes are measured on.
        capture_limit: keep at most this many captured requests.
        capture_max_bytes: keep captured requests whose bodies, as the
            capture keeps them (deltas against the body before, or whole and
            compressed), take at most this many bytes (the newest is always
            kept); `None` for no bound. Dropped records are counted in
            `stats().capture`.
        ledger_max_bytes: the diagnostics ledger remembers earlier prompts
            of at most this many body bytes (the newest always); `None`
            for no bound.
        **overrides: `Profile` fields to replace (`block_size=128`,
            `ttl=300`, `capacity_tokens=10_000`, ...).
    """

    def __init__(
        self,
        profile: Profile | str = DEFAULT_DIALECT,
        *,
        clock: LogicalClock | None = None,
        capture_limit: int | None = None,
        capture_max_bytes: int | None = DEFAULT_CAPTURE_BYTES,
        ledger_max_bytes: int | None = DEFAULT_LEDGER_BYTES,
        **overrides: Any,
    ) -> None:
        base = get_profile(profile) if isinstance(profile, str) else profile
        self._profile = dataclasses.replace(base, **overrides) if overrides else base
        self._dialect = dialect_named(self._profile.dialect)
        self.clock = clock if clock is not None else LogicalClock()
        self.script = Script()
        self.capture = CaptureLog(capture_limit, capture_max_bytes)
        self.index = self._new_index()
        self.ledger = DivergenceLedger(ledger_max_bytes)
        self.encoder = SegmentEncoder()
        self.blocks = BlockKeyMemo()
        self.messages: MessagePrefixMemo | None = MessagePrefixMemo()
        self.conversations = ConversationStore()
        self.fingerprints = FingerprintStore()
        self._lock = threading.RLock()
        self._gates: dict[str, Gate] = {}
        self._next_index = 0
        self._totals = Totals()

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
            if capture:
                # Answer ids restart with the captures: what they named goes.
                # (Stored responses and diagnostics records are not cache:
                # they outlive a cache reset, as they outlive an eviction.)
                self.conversations.clear()
                self.fingerprints.clear()
            if cache:
                self.index.clear()
                self.ledger.clear()
                self.blocks.clear()
                if self.messages is not None:
                    self.messages.clear()
            if capture:
                self.capture.clear()
                self._totals = Totals()
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

    def route(self, match: RequestMatch, *actions: Action) -> None:
        """Queue actions for the requests `match` holds for (`Script.route`)."""
        with self._lock:
            self.script.route(match, *actions)

    def routes(self) -> list[tuple[RequestMatch, list[Action]]]:
        """Each route and its queued actions."""
        with self._lock:
            return self.script.routes()

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
        """Every captured request, in arrival order (rebuilt outside the
        lock, from a snapshot taken under it)."""
        return list(self.capture_snapshot())

    def iter_requests(self) -> Iterator[CapturedRequest]:
        """The captured requests kept now, in arrival order, each rebuilt
        (its body unpacked and parsed) only when the iteration reaches it:
        for reading a long capture without holding all of it at once."""
        return iter(self.capture_snapshot())

    def capture_snapshot(self) -> CaptureSnapshot:
        """The captured requests kept now (`CaptureLog.snapshot`)."""
        with self._lock:
            return self.capture.snapshot()

    @property
    def last_request(self) -> CapturedRequest:
        """The most recent captured request."""
        with self._lock:
            if not len(self.capture):
                raise LookupError("the fake provider has not received any request yet")
            return self.capture[-1]

    def diagnostics(self) -> list[Diagnostic]:
        """Diagnostics of every answered request, in arrival order."""
        return [
            r.diagnostic for r in self.capture_summaries() if r.diagnostic is not None
        ]

    def capture_summaries(self) -> list[CapturedRequest]:
        """The captured requests without their bodies (`raw_body` empty,
        `body` None), cheap to read: `CaptureLog.summaries`."""
        with self._lock:
            return self.capture.summaries()

    def capture_jsonl(self) -> str:
        """The capture log as JSONL text."""
        return dump_capture_jsonl(self.capture_snapshot())

    def stats(self) -> ProviderStats:
        """Totals since the last reset."""
        with self._lock:
            return self._totals.snapshot(
                clock=self.clock.now(),
                index=self.index.stats(),
                capture=self.capture.stats(),
                forgotten_prompts=self.ledger.forgotten,
            )

    def count_prompt_tokens(self, body: JsonValue) -> int:
        """Prompt tokens the fake would count for this request body."""
        return render_prompt(self.prompt_segments(body), self.encoder).n_tokens

    def prompt_segments(self, body: JsonValue) -> list[Segment]:
        """The prompt segments of a request body, in the profile's order.

        Raises:
            InvalidRequest: the body is not a valid request of the dialect
                (or names a stored response the fake does not keep).
        """
        call = self._dialect.expand(self._dialect.parse(body), self.conversations)
        return self._dialect.segments(call, self._profile)

    # --- the core --------------------------------------------------------------

    def handle(self, request: HttpRequest) -> ResponsePlan:
        """Answer one provider request.

        Only the provider endpoints: `reqfold.fakes.routing.serve_request` adds the
        control surface under `/_fake/` in front of this. The work that
        depends on the request alone (parsing, validation, rendering and
        tokenizing the prompt) runs without the lock, so one large request
        does not hold up the others; what touches shared state (the
        request index, the script, the cache index, the ledger, the
        capture) runs under the lock, atomically.
        """
        refused = self._refuse_route(request)
        if refused is not None:
            # Captured all the same (index, headers minus secrets, body), so a
            # user sees what the harness tried: an unserved API, a GET /models.
            with self._lock:
                index, now = self._take_index()
                self._totals.errors += 1
                self._record(
                    request,
                    index,
                    _lenient_json(request.body),
                    refused.status,
                    now,
                    _plan_json(refused),
                    None,
                    None,
                    unserved=True,
                )
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

    def _error_plan(
        self,
        status: int,
        message: str,
        *,
        error_type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
        headers: tuple[tuple[str, str], ...] = (),
    ) -> tuple[ResponsePlan, JsonObject]:
        body = self._dialect.error_body(
            status, message, error_type=error_type, param=param, code=code
        )
        return error_plan(status, body, headers), body

    def _refuse_route(self, request: HttpRequest) -> ResponsePlan | None:
        serving = serving_name(request.path)
        if serving is None:
            plan, _ = self._error_plan(
                404,
                f"Unknown request URL: {request.method} {request.path}. "
                f"The fake serves {served_paths(self._dialect.paths)} and the "
                "control surface under "
                "/_fake/.",
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
        if request.path not in self._dialect.paths:
            plan, _ = self._error_plan(
                404,
                f"This fake speaks the {self._profile.dialect} dialect; {request.path} "
                f"needs a provider started with the {serving} dialect "
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
        body: JsonValue = None
        dialect = self._dialect
        try:
            body = self._parse_body(request, profile)
            call = dialect.parse(body)
            if not profile.serves(call.model):
                raise dialect.unknown_model(profile, call.model)
            call = dialect.expand(call, self.conversations)
            prompt = dialect.render(call, profile, self.encoder, self.messages)
        except InvalidRequest as error:
            return _Prepared(body=body, error=error)
        root = self._partition(request, call.model, call.body, profile)
        chain = segment_chain(root, prompt.digests)
        keys: list[bytes] = []
        if dialect.uses_block_keys:
            # One BLAKE2b per new block: for a large new prompt, seconds of
            # work better done before taking the lock.
            keys = self.blocks.keys(root, prompt, profile.block_size, chain)
        return _Prepared(
            body=body,
            call=call,
            prompt=prompt,
            root=root,
            chain=chain,
            keys=keys,
            profile=profile,
        )

    def _answer_provider(
        self, request: HttpRequest, index: int, now: float, prepared: _Prepared
    ) -> ResponsePlan:
        body, call, prompt = prepared.body, prepared.call, prepared.prompt
        if prepared.error is not None or call is None or prompt is None:
            error = prepared.error or InvalidRequest("the request was not prepared")
            return self._reject(request, index, body, now, error)
        assert isinstance(body, dict)
        scripted = ScriptedRequest(
            index=index,
            path=request.path,
            dialect=self._profile.dialect,
            body=body,
            key=api_key_digest(request),
            texts=self._dialect.texts(body),
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
        return self._answer(request, index, call, action, now, prepared)

    def _parse_body(self, request: HttpRequest, profile: Profile) -> JsonValue:
        limit = profile.max_body_bytes
        if len(request.body) > limit:
            raise InvalidRequest(
                f"Request body exceeds the limit of {limit} bytes "
                f"(received at least {len(request.body)}).",
                status=413,
            )
        return parse_json_body(request.body)

    def _reject(
        self,
        request: HttpRequest,
        index: int,
        body: JsonValue,
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
        body: JsonValue,
        now: float,
        fault: Fault,
    ) -> ResponsePlan:
        reply = self._dialect.fault_body(fault)
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
        self, request: HttpRequest, model: str, body: JsonObject, profile: Profile
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

    def cache_rule(self, matched: int, n: int, model: str) -> int:
        """Cached tokens reported for a prompt of `n` tokens matching `matched`.

        `floor(min(matched, cap) / block) * block`, or 0 below the minimum,
        with `cap = n - 1` when the profile withholds the last token.
        """
        return cache_rule(self._profile, matched, n, model)

    def _answer(
        self,
        request: HttpRequest,
        index: int,
        call: Any,
        reply: Reply,
        now: float,
        prepared: _Prepared,
    ) -> ResponsePlan:
        profile, dialect = self._profile, self._dialect
        root, prompt = prepared.root, prepared.prompt
        assert prompt is not None
        comparison = self.ledger.compare(root, prompt, prepared.chain)
        state = CacheState(index=self.index, ledger=self.ledger, now=now)
        accounting = dialect.account(
            state, call, prompt, prepared.keys, root, comparison, reply, profile
        )
        native, current = NOT_ASKED, None
        if dialect.diagnoses(call):
            current = fingerprint(call.model, prompt, dialect.settings(call))
            native = dialect.native_diagnosis(call, current, self.fingerprints)
        answer = dialect.answer(
            profile, index, call, reply, now, accounting.usage, native.members
        )
        if native.kept and current is not None:
            self.fingerprints.put(answer.answer_id, current)
        if answer.conversation is not None:
            self.conversations.put(answer.answer_id, answer.conversation)
        if answer.frames is not None:
            plan = stream_plan(
                answer.frames, reply, answer.keepalive, self._resolve_hold(reply.hold)
            )
        else:
            assert answer.body is not None
            plan = json_plan(answer.body, reply, self._resolve_hold(reply.hold))
        self.ledger.record(
            root,
            index,
            prompt,
            answer.emitted,
            weight=len(request.body),
            chain=prepared.chain,
        )
        self._totals.count(
            prompt.n_tokens,
            accounting.cached,
            accounting.written,
            first=comparison.relation == "first",
        )
        diagnostic = make_diagnostic(
            prompt,
            accounting.cached,
            accounting.matched,
            accounting.expected,
            comparison,
        )
        if native.compared:
            diagnostic["provider"] = native.members
        self._record(
            request,
            index,
            call.body,
            plan.status,
            now,
            answer.emitted,
            json_object(accounting.usage),
            diagnostic,
        )
        return plan

    def _record(
        self,
        request: HttpRequest,
        index: int,
        body: JsonValue,
        status: int,
        now: float,
        reply: JsonValue,
        usage: JsonObject | None,
        diagnostic: Diagnostic | None,
        *,
        unserved: bool = False,
    ) -> None:
        # Every caller passes `body` as `parse_json_body(request.body)` gave
        # it (the dialects keep the parsed object as `call.body`), or None:
        # so the capture keeps only the raw body and parses it when read.
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
                unserved=unserved,
            ),
            parsed=body is not None,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Prepared:
    """A provider request parsed, validated and tokenized, or why not."""

    body: JsonValue
    call: Any = None  # the dialect's call
    prompt: RenderedPrompt | None = None
    root: bytes = b""
    chain: list[bytes] = dataclasses.field(default_factory=list)
    keys: list[bytes] = dataclasses.field(default_factory=list)
    profile: Profile | None = None
    error: InvalidRequest | None = None


def served_paths(paths: tuple[str, ...]) -> str:
    """A dialect's provider paths, once each and in order, for the
    unknown-URL error (only what this provider serves)."""
    return ", ".join(f"POST {path}" for path in dict.fromkeys(paths))


def _lenient_json(raw: bytes) -> JsonValue:
    """The body as JSON where it is JSON (a refused request's), else None."""
    try:
        return parse_json_body(raw) if raw else None
    except InvalidRequest:
        return None


def _plan_json(plan: ResponsePlan) -> JsonValue:
    """The JSON body of a one-chunk answer (an error), else None."""
    try:
        return _lenient_json(b"".join(plan.chunks))
    except Exception:  # pragma: no cover - an error plan is JSON
        return None


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)
