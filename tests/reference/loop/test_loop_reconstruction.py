"""Requests rebuilt from the log alone, frozen requests, and the cache consequence.

Anchor 4.3-4.9; checklist items 22-30, 50-51, 65-66. The dev invariant is
in test_loop_invariant.py; the cancel windows in test_loop_interrupts.py.
"""

from __future__ import annotations

import pytest
from messages import text, user

from reqfold.fakes import Reply, ToolCall
from reqfold.reference.header import fold_request_header
from reqfold.reference.json_values import canonical_json
from reqfold.reference.loop import (
    FrozenRequest,
    Tool,
    is_frozen,
)
from reqfold.reference.reconstruct import (
    compare_with_captures,
    header_events,
    rebuild_requests,
)
from reqfold.reference.revisions import Revision

REVISIONS = pytest.mark.parametrize("revision", list(Revision), ids=lambda r: r.value)


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
        from reqfold.reference.loop import Framing

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


@pytest.mark.spec("REQ-7", "REQ-1", "JSONL-2")
def test_a_listener_cannot_change_a_logged_event_or_the_next_request(harness, tmp_path):
    from reqfold.reference.loop import create_session_file
    from reqfold.reference.shells.jsonl import load_session_file

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
