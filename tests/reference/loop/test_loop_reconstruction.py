"""Requests rebuilt from the log alone, frozen requests, the dev invariant.

Also the cancel windows and the cache consequence (anchor 4.3-4.9;
checklist items 22-30, 50-51, 65-66).
"""

from __future__ import annotations

import pytest

from fakes import Reply, ToolCall, rate_limited, stream_cut
from reference.header import fold_request_header
from reference.json_values import canonical_json
from reference.loop import (
    AgentLoop,
    FrozenRequest,
    RequestDiverges,
    Tool,
    check_request,
    is_frozen,
    thaw,
)
from reference.reconstruct import compare_with_captures, header_events, rebuild_requests
from reference.request import contract_view
from reference.revisions import Revision

REVISIONS = pytest.mark.parametrize("revision", list(Revision), ids=lambda r: r.value)


def text(value):
    return {"type": "text", "text": value}


def user(value):
    return {"role": "user", "content": [text(value)]}


def types(loop):
    return [event["type"] for event in loop.session]


async def lookup(arguments, context):
    return f"{arguments['key']} = 42"


LOOKUP = Tool(
    name="lookup",
    description="Look a key up.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}},
    execute=lookup,
)


def with_framing(loop):
    """Contribute framing/prefix messages in whichever seam the revision has."""
    if loop.revision is Revision.SESSION_PREFIX:

        async def prefix(context, seed, next):
            return [user("house rules"), *await next()]

        loop.hooks.session_prefix.register(prefix)
    elif loop.revision is Revision.REQUEST_MESSAGES:
        from reference.loop import Framing

        async def framing(context, seed, next):
            return Framing(
                before=[user(f"turn {context.turn}")], after=[user("be brief")]
            )

        loop.hooks.request_messages.register(framing)


@REVISIONS
@pytest.mark.spec(
    "REQ-1",
    "REQ-2",
    "REQ-3",
    "REQ-4",
    "REQ-5",
    "REQ-6",
    "WIRE-1",
    "WIRE-2",
    "WIRE-3",
    "WIRE-4",
    "WIRE-5",
    "JSON-3",
)
def test_theorem_every_request_rebuilds_byte_equal_from_the_session_log_alone(
    harness, fake, revision
):
    fake.push(
        Reply(
            text="Looking.",
            reasoning="need the key",
            tool_calls=(ToolCall.of("lookup", {"key": "a"}, id="c1"),),
        ),
        Reply(text="a is 42."),
        Reply(text="Second turn."),
        Reply(text="Third turn."),
    )

    async def scenario():
        loop = harness.loop(
            system="You help.\nBe exact.", tools=[LOOKUP], revision=revision
        )
        with_framing(loop)

        async def sampling(context, config, next):
            base = await next()
            if context.turn == 3:
                return {**base, "temperature": 0.3, "maxTokens": 64, "stop": ["END"]}
            return base

        loop.hooks.request.register(sampling)
        await loop.send("what is a?")
        loop.system = "You help.\nBe exact.\nA new section."
        await loop.send("and now?")
        await loop.send("last one")
        return loop

    loop = harness.run(scenario())
    bodies = [c.json for c in fake.requests]
    assert len(bodies) == 4
    assert compare_with_captures(loop.session.events, bodies, revision) == []
    for rebuilt, captured in zip(
        rebuild_requests(loop.session.events, revision), fake.requests, strict=True
    ):
        assert captured.raw_body == canonical_json(rebuilt.body(stream=True)).encode()
    assert bodies[3]["temperature"] == 0.3
    calling = next(m for m in bodies[1]["messages"] if m.get("tool_calls"))
    assert calling["reasoning_content"] == "need the key"


@pytest.mark.spec("REQ-7", "CACHE-1", "WRITER-2")
def test_each_step_request_within_a_turn_append_extends_the_previous_frozen_end_to_end(
    harness, fake
):
    fake.push(
        Reply(tool_calls=(ToolCall.of("lookup", {"key": "a"}, id="c1"),)),
        Reply(tool_calls=(ToolCall.of("lookup", {"key": "b"}, id="c2"),)),
        Reply(text="done"),
    )

    async def scenario():
        loop = harness.loop(tools=[LOOKUP])
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    assert len(loop.requests) == 3
    for request in loop.requests:
        assert is_frozen(request.header)
        assert is_frozen(request.messages)
    for before, after in zip(loop.requests, loop.requests[1:], strict=False):
        assert after.messages[: len(before.messages)] == before.messages
        assert after.header == before.header
    assert [e["data"]["reason"] for e in header_events(loop.session.events)] == [
        "initial"
    ]


@pytest.mark.spec("CACHE-1")
def test_a_later_turn_append_extends_the_previous_turn(harness):
    async def scenario():
        loop = harness.loop()
        await loop.send("one")
        await loop.send("two")
        return loop

    harness.run(scenario())
    first, second = (c.json["messages"] for c in harness.fake.requests)
    assert second[: len(first)] == first
    assert second[len(first)] == {"role": "assistant", "content": "ok"}


@pytest.mark.spec("REQ-7")
def test_a_mutation_attempt_on_the_frozen_request_throws_into_the_step(harness):
    async def scenario():
        loop = harness.loop()

        async def tamper(context):
            context.request.messages[0]["content"] = [text("tampered")]

        loop.hooks.dispatch.register(tamper)
        return loop, await loop.send("hi")

    _loop, result = harness.run(scenario())
    assert result.kind == "error"
    assert isinstance(result.error, TypeError)
    assert "does not support item assignment" in result.reason["message"]
    assert harness.fake.requests == []
    request = FrozenRequest.build(
        turn=1, step=1, boundary=0, header={"config": {"model": "m"}}, messages=[]
    )
    with pytest.raises(AttributeError):
        request.turn = 2  # type: ignore[misc]


@pytest.mark.spec("REQ-7", "EQ-2")
def test_a_delegating_listener_cannot_mutate_the_seed_so_the_fold_stays_log_true(
    harness,
):
    async def scenario():
        loop = harness.loop()
        errors = []

        async def mutate(context, config, next):
            base = await next()
            try:
                base["temperature"] = 1.0
            except TypeError as error:
                errors.append(error)
            return base

        loop.hooks.request.register(mutate)
        await loop.send("one")
        await loop.send("two")
        return loop, errors

    loop, errors = harness.run(scenario())
    assert len(errors) == 2
    assert len(header_events(loop.session.events)) == 1
    assert "temperature" not in fold_request_header(loop.session.events)["config"]


@pytest.mark.spec("REQ-1", "TURN-2", "TURN-3")
def test_a_cancel_from_a_synchronous_step_start_listener_drops_the_step(harness):
    async def scenario():
        loop = harness.loop()

        def on_event(event):
            if event["type"] == "step/start":
                loop.cancel("from step/start")

        loop.on_event(on_event)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "aborted", "reason": "from step/start"}
    assert types(loop) == [
        "turn/start",
        "user/message",
        "step/start",
        "step/end",
        "turn/end",
    ]
    assert harness.fake.requests == []


@pytest.mark.spec("TURN-2")
def test_a_dispose_from_a_step_start_listener_closes_the_open_step_as_disposed(
    harness,
):
    async def scenario():
        loop = harness.loop()

        def on_event(event):
            if event["type"] == "step/start":
                loop.dispose()

        loop.on_event(on_event)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "disposed"}
    assert types(loop)[-2:] == ["step/end", "turn/end"]
    assert "request/header" not in types(loop)


@pytest.mark.spec("TURN-1", "TURN-2")
def test_a_cancel_while_the_provider_streams_aborts_the_turn_and_closes_the_step(
    harness, fake
):
    # The log cannot show whether a request aborted in flight was sent: the
    # step is a "maybe" (evidence "header").
    harness.check_theorem = False

    async def scenario():
        loop = harness.loop()

        def escape_while_in_flight(request):
            loop.cancel("user pressed escape")
            return Reply(text="never delivered", hold="held")

        fake.respond_with(escape_while_in_flight)
        result = await loop.send("hi")
        return loop, result

    loop, result = harness.run(scenario())
    assert result.reason == {"kind": "aborted", "reason": "user pressed escape"}
    assert types(loop)[-3:] == ["request/header", "step/end", "turn/end"]
    rebuilt = rebuild_requests(loop.session.events)
    assert [r.evidence for r in rebuilt] == ["header"]
    assert rebuilt[0].contract_body() == contract_view(fake.requests[0].json)


@pytest.mark.spec("REQ-2", "TURN-1")
def test_a_provider_error_ends_the_turn_with_its_code_and_the_request_still_rebuilds(
    harness, fake
):
    fake.push(rate_limited(retry_after=2.0, message="slow down"))

    async def scenario():
        loop = harness.loop()
        first = await loop.send("one")
        second = await loop.send("two")
        return loop, first, second

    loop, first, second = harness.run(scenario())
    assert first.reason == {
        "kind": "error",
        "step": 1,
        "message": "slow down",
        "code": "RATE_LIMIT",
    }
    assert second.kind == "completed"
    assert [r.evidence for r in rebuild_requests(loop.session.events)] == [
        "provider-error",
        "response",
    ]


@pytest.mark.spec("TURN-1")
def test_a_stream_cut_mid_way_ends_the_turn_with_stream_closed(harness, fake):
    fake.push(stream_cut(2, Reply(text="this answer breaks off somewhere")))

    async def scenario():
        loop = harness.loop()
        return await loop.send("hi")

    result = harness.run(scenario())
    assert result.reason["code"] == "STREAM_CLOSED"


class DerivesAfterStepStart(AgentLoop):
    """A broken harness: it derives the history after appending step/start (pre-R2)."""

    def _cross_boundary(self, turn, step):
        boundary = self.append("step/start", {"turn": turn, "step": step})["seq"]
        return self.session.derive_messages(), boundary


@pytest.mark.spec("REQ-1")
def test_the_dev_invariant_catches_a_harness_that_derives_after_the_boundary(harness):
    harness.check_theorem = False

    async def scenario():
        loop = DerivesAfterStepStart(
            provider=harness.client(), model="deepseek-chat", clock=harness.clock
        )
        harness.loops.append(loop)

        def on_event(event):
            if event["type"] == "step/start":
                loop.inject("post-boundary note")

        loop.on_event(on_event)
        with pytest.raises(RequestDiverges, match=r"\[REQ-5\].*boundary derivation"):
            await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert types(loop)[-2:] == ["step/end", "turn/end"]
    assert loop.session[-1]["data"]["reason"]["code"] == "REQUEST_DIVERGES"
    assert harness.fake.requests == []


def _log_with_one_step():
    from reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append(
        "user/message",
        {"content": [text("hi")], "source": {"kind": "user"}},
        time=0,
        surface_op="append",
    )
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    header = {"config": {"model": "m"}, "messagePrefix": [user("p")]}
    log.append("request/header", {"header": header, "reason": "initial"}, time=0)
    log.append(
        "context/message",
        {"content": [text("late")], "source": {"kind": "user"}},
        time=0,
        surface_op="append",
    )
    return log, header


@pytest.mark.parametrize(
    ("messages", "header", "rule"),
    [
        pytest.param([user("p"), user("hi")], None, None, id="exact request passes"),
        pytest.param(
            [user("p"), user("hi"), user("phantom")],
            None,
            "REQ-5",
            id="phantom message",
        ),
        pytest.param([user("hi")], None, "REQ-5", id="dropped prefix"),
        pytest.param([user("hi"), user("p")], None, "REQ-5", id="misplaced prefix"),
        pytest.param(
            [user("p"), user("hi")],
            {"config": {"model": "other"}, "messagePrefix": [user("p")]},
            "REQ-2",
            id="wrong model",
        ),
    ],
)
@pytest.mark.spec("REQ-1", "REQ-2", "REQ-5")
def test_the_cross_check_accepts_only_the_boundary_derivation_under_the_folded_header(
    messages, header, rule
):
    log, logged_header = _log_with_one_step()
    request = FrozenRequest.build(
        turn=1, step=1, boundary=2, header=header or logged_header, messages=messages
    )
    if rule is None:
        check_request(log.events, request, Revision.SESSION_PREFIX)
    else:
        with pytest.raises(RequestDiverges, match=rf"\[{rule}\]"):
            check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-7")
def test_the_cross_check_rejects_an_unfrozen_request():
    log, header = _log_with_one_step()
    request = FrozenRequest(
        turn=1, step=1, boundary=2, header=header, messages=(thaw(user("p")),)
    )
    with pytest.raises(RequestDiverges, match=r"\[REQ-7\]"):
        check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-2")
def test_the_cross_check_rejects_a_step_with_no_header_in_force():
    from reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    request = FrozenRequest.build(
        turn=1, step=1, boundary=1, header={"config": {"model": "m"}}, messages=[]
    )
    with pytest.raises(RequestDiverges, match=r"\[REQ-2\]"):
        check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("CACHE-1", "CACHE-3")
def test_every_request_after_an_instance_s_first_hits_the_cache_for_the_previous_prompt(
    harness, fake
):
    fake.push(
        Reply(
            text="Let me check.",
            tool_calls=(ToolCall.of("lookup", {"key": "a"}, id="c1"),),
        ),
        Reply(text="It is 42."),
        Reply(text="Anything else?"),
        Reply(text="Resumed."),
    )
    persona = "You are a careful assistant who answers with the value found. " * 12

    async def scenario():
        loop = harness.loop(system=persona, tools=[LOOKUP])

        async def rules(context, seed, next):
            return [user("Project rules: cite every lookup. " * 10), *await next()]

        loop.hooks.session_prefix.register(rules)
        await loop.send("What is a?")
        await loop.send("Thanks.")
        resumed = harness.loop(system=persona, tools=[LOOKUP], session=loop.session)
        resumed.hooks.session_prefix.register(rules)
        await resumed.send("Back again.")
        return loop

    harness.run(scenario())
    usages = [c.usage for c in fake.requests]
    prompts = [u["prompt_tokens"] for u in usages]
    cached = [u["prompt_cache_hit_tokens"] for u in usages]
    assert cached[0] == 0
    for previous, hit in zip(prompts, cached[1:], strict=False):
        assert hit >= (previous // 64) * 64 > 0
    assert [d["relation"] for d in fake.diagnostics()] == [
        "first",
        "append",
        "append",
        "append",
    ]


@pytest.mark.spec("CACHE-1", "WRITER-3")
def test_a_header_change_is_the_logged_reason_a_request_stops_extending_the_previous(
    harness, fake
):
    persona = "Persona line that is long enough to fill cache blocks. " * 20

    async def scenario():
        loop = harness.loop(system=persona)
        await loop.send("one")
        loop.system = persona + "\nNew rule."
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    diagnostic = fake.requests[1].diagnostic
    assert diagnostic["relation"] == "diverged"
    assert (
        diagnostic["divergence"]["segment"] == "system"
        or diagnostic["divergence"]["field"]
    )
    assert header_events(loop.session.events)[1]["type"] == "request/header-delta"


class Recording:
    """A provider wrapper that records every call the loop starts."""

    def __init__(self, inner):
        self.inner = inner
        self.started = []

    async def complete(self, request, signal):
        self.started.append(request)
        return await self.inner.complete(request, signal)


@pytest.mark.spec("REQ-7", "REQ-1", "JSONL-2")
def test_a_listener_cannot_change_a_logged_event_or_the_next_request(harness, tmp_path):
    from reference.jsonl import load_session_file
    from reference.loop import create_session_file

    path = tmp_path / "session.jsonl"

    async def scenario():
        session, sink = create_session_file(path, session_id="s", created_at=0)
        loop = harness.loop(session=session, sink=sink)
        refused = []

        def redact(event):
            if event["type"] == "user/message":
                try:
                    event["data"]["content"][0]["text"] = "REDACTED"
                except TypeError as error:
                    refused.append(error)

        loop.on_event(redact)
        await loop.send("secret")
        injected = loop.inject("note")
        try:
            injected["data"]["content"][0]["text"] = "changed"
        except TypeError as error:
            refused.append(error)
        await loop.send("again")
        return loop, refused

    loop, refused = harness.run(scenario())
    assert len(refused) == 3
    wire = [c.json["messages"] for c in harness.fake.requests]
    assert wire[0] == [{"role": "user", "content": "secret"}]
    assert "REDACTED" not in str(wire)
    assert "changed" not in str(wire)
    assert load_session_file(path).events == loop.session.events
    assert "REDACTED" not in str(loop.session.events)


@pytest.mark.spec("REQ-7", "REQ-2", "TURN-3")
@pytest.mark.parametrize("interrupt", ["cancel", "dispose", "raise"])
def test_a_dispatch_observer_that_interrupts_stops_the_step_before_its_header_is_logged(
    harness, interrupt
):
    async def scenario():
        loop = harness.loop()

        async def observe(context):
            if interrupt == "cancel":
                context.loop.cancel("observer")
            elif interrupt == "dispose":
                context.loop.dispose()
            else:
                raise RuntimeError("metrics backend down")

        loop.hooks.dispatch.register(observe)
        return loop, await loop.send("hi")

    loop, result = harness.run(scenario())
    assert result.kind == {"cancel": "aborted", "dispose": "disposed"}.get(
        interrupt, "error"
    )
    assert types(loop) == [
        "turn/start",
        "user/message",
        "step/start",
        "step/end",
        "turn/end",
    ]
    assert loop.requests == []
    assert harness.fake.requests == []


@pytest.mark.spec("REQ-7", "REQ-2", "TURN-3")
@pytest.mark.parametrize("interrupt", ["cancel", "dispose", "raise"])
def test_once_the_header_event_is_logged_the_request_is_started_and_aborted_in_flight(
    harness, interrupt
):
    async def scenario():
        provider = Recording(harness.client())
        loop = harness.loop(client=provider)

        def on_event(event):
            if event["type"] == "request/header":
                if interrupt == "cancel":
                    loop.cancel("header listener")
                elif interrupt == "dispose":
                    loop.dispose()
                else:
                    raise RuntimeError("header listener broke")

        loop.on_event(on_event)
        return loop, provider, await loop.send("hi")

    loop, provider, result = harness.run(scenario())
    assert result.kind == {"cancel": "aborted", "dispose": "disposed"}.get(
        interrupt, "error"
    )
    assert types(loop)[2:] == ["step/start", "request/header", "step/end", "turn/end"]
    assert len(provider.started) == 1
    assert loop.requests == provider.started
    rebuilt = rebuild_requests(loop.session.events)
    assert [r.evidence for r in rebuilt] == ["header"]
    assert (
        compare_with_captures(
            loop.session.events, [c.json for c in harness.fake.requests]
        )
        == []
    )


@pytest.mark.spec("REQ-1", "REQ-2", "TURN-3")
def test_the_dev_invariant_refuses_a_diverging_request_before_its_header_is_logged(
    harness,
):
    harness.check_theorem = False

    async def scenario():
        loop = DerivesAfterStepStart(
            provider=harness.client(), model="deepseek-chat", clock=harness.clock
        )
        harness.loops.append(loop)

        def on_event(event):
            if event["type"] == "step/start":
                loop.inject("post-boundary note")

        loop.on_event(on_event)
        with pytest.raises(RequestDiverges):
            await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert "request/header" not in types(loop)
    assert harness.fake.requests == []


@pytest.mark.spec("REQ-2", "CACHE-1", "JSON-2")
def test_the_cross_check_rejects_a_header_equal_by_value_but_spelled_differently():
    from reference.session_log import SessionLog

    log = SessionLog()
    log.append("turn/start", {"turn": 1}, time=0)
    log.append("step/start", {"turn": 1, "step": 1}, time=0)
    header = {"config": {"model": "m", "temperature": 0}}
    log.append("request/header", {"header": header, "reason": "initial"}, time=0)
    request = FrozenRequest.build(
        turn=1,
        step=1,
        boundary=1,
        header={"config": {"model": "m", "temperature": 0.0}},
        messages=[],
    )
    with pytest.raises(RequestDiverges, match=r"\[REQ-2\].*byte"):
        check_request(log.events, request, Revision.SESSION_PREFIX)


@pytest.mark.spec("REQ-2", "WRITER-5")
def test_a_header_event_logged_by_a_dispatch_observer_is_refused_before_the_writer_logs(
    harness,
):
    harness.check_theorem = False

    async def scenario():
        loop = harness.loop()

        async def meddle(context):
            header = {"config": {"model": "other"}}
            context.loop.append(
                "request/header", {"header": header, "reason": "fallback"}
            )

        loop.hooks.dispatch.register(meddle)
        with pytest.raises(RequestDiverges, match=r"\[REQ-2\].*dispatch observers"):
            await loop.send("hi")
        return loop

    loop = harness.run(scenario())
    assert [e["data"]["reason"] for e in header_events(loop.session.events)] == [
        "fallback"
    ]
    assert harness.fake.requests == []
