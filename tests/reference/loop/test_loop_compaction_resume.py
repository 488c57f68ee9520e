"""Compaction and the prefix; resume over a persisted JSONL log.

Anchor 1.8 and 7.1; checklist items 24, 60, 63 and 69.
"""

from __future__ import annotations

import pytest
from messages import text, types, user

from reqfold.fakes import Reply, ToolCall
from reqfold.reference.loop import (
    AgentLoop,
    Compactor,
    Tool,
    create_session_file,
    open_session_file,
    thaw,
)
from reqfold.reference.reconstruct import header_events
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.jsonl import load_session_file


@pytest.mark.spec("PREFIX-7", "SURF-1", "SURF-3", "SURF-4", "CACHE-1")
def test_a_compaction_replace_rewrites_the_resend_and_the_log_explains_it(harness):
    compactor = Compactor(threshold_tokens=60)

    async def scenario():
        loop = harness.loop(system="Be brief.")
        loop.hooks.session_prefix.register(
            lambda c, seed, next: _prefix(next, user("house rules"))
        )
        loop.hooks.pre_step.register(compactor)
        for prompt in ("first question " * 5, "second question " * 5, "third"):
            await loop.send(prompt)
        return loop

    loop = harness.run(scenario())
    replace = next(e for e in loop.session if e.get("surfaceOp", "append") != "append")
    assert replace["type"] == "user/message"
    assert replace["data"]["source"] == {"kind": "plugin", "plugin": "compact"}
    start, summary = (loop.session[s] for s in replace["sourceEventSeqs"][:2])
    assert (start["type"], summary["type"]) == ("compact/start", "compact/summary")
    assert replace["sourceEventSeqs"][2:] == summary["data"]["shadowedSeqs"]
    index = types(loop.session).index("compact/end")
    assert types(loop.session)[index + 1] == "step/start"
    after = next(r for r in loop.requests if r.boundary > replace["seq"])
    assert thaw(after.messages[0]) == user("house rules")
    assert thaw(after.messages[1])["content"][0]["text"].startswith(
        "Summary of the conversation"
    )
    assert len(header_events(loop.session.events)) == 1
    assert all(r.header == loop.requests[0].header for r in loop.requests)


async def _prefix(next, message):
    return [message, *await next()]


@pytest.mark.spec("PREFIX-7")
def test_token_pressure_counts_the_session_prefix(harness):
    without = Compactor(threshold_tokens=10_000)
    with_prefix = Compactor(threshold_tokens=10_000)

    async def scenario():
        bare = harness.loop()
        bare.hooks.pre_step.register(without)
        await bare.send("hello")
        loop = harness.loop()
        loop.hooks.session_prefix.register(
            lambda c, seed, next: _prefix(next, user("a long rule " * 40))
        )
        loop.hooks.pre_step.register(with_prefix)
        await loop.send("hello")

    harness.run(scenario())
    assert with_prefix.estimates[0] > without.estimates[0] + 100


@pytest.mark.spec("PREFIX-7")
def test_a_prefix_that_alone_nears_the_window_is_never_compacted_away(harness):
    compactor = Compactor(threshold_tokens=20)

    async def scenario():
        loop = harness.loop()
        loop.hooks.session_prefix.register(
            lambda c, seed, next: _prefix(next, user("a long rule " * 40))
        )
        loop.hooks.pre_step.register(compactor)
        await loop.send("one")
        await loop.send("two")
        return loop

    loop = harness.run(scenario())
    assert thaw(loop.requests[-1].messages[0]) == user("a long rule " * 40)


@pytest.mark.spec(
    "JSONL-1", "JSONL-2", "JSONL-5", "LOG-2", "LOG-6", "TURN-1", "WRITER-1"
)
def test_resume_reloads_a_persisted_session_and_continues_turns_and_seqs(
    harness, tmp_path
):
    path = tmp_path / "session.jsonl"

    async def scenario():
        session, sink = create_session_file(path, session_id="s1", created_at=0)
        first = harness.loop(system="Be brief.", session=session, sink=sink)
        await first.send("one")
        first.dispose()
        session, sink = open_session_file(path)
        second = harness.loop(system="Be brief.", session=session, sink=sink)
        result = await second.send("two")
        return second, result

    loop, result = harness.run(scenario())
    assert result.turn == 2
    loaded = load_session_file(path)
    assert loaded.torn_tail is None
    assert [e["seq"] for e in loaded.events] == list(range(len(loaded.events)))
    assert loaded.events == loop.session.events
    turns = [e["data"]["turn"] for e in loaded.events if e["type"] == "turn/start"]
    assert turns == [1, 2]
    reasons = [e["data"]["reason"] for e in header_events(loaded.events)]
    assert reasons == ["initial", "resume"]
    wire = harness.fake.requests[1].json["messages"]
    assert [m["content"] for m in wire] == ["Be brief.", "one", "ok", "two"]


@pytest.mark.spec("LOG-6", "DERIVE-1")
def test_replaying_a_log_into_a_new_session_reproduces_the_derived_history(
    harness, fake
):
    fake.push(Reply(tool_calls=(ToolCall.of("t", {}, id="c1"),)), Reply(text="done"))

    async def run_tool(arguments, context):
        return "out"

    async def scenario():
        loop = harness.loop(tools=[Tool(name="t", description="", execute=run_tool)])
        loop.inject("ctx")
        await loop.send("go")
        return loop

    loop = harness.run(scenario())
    assert (
        SessionLog(loop.session.events).derive_messages()
        == loop.session.derive_messages()
    )


@pytest.mark.spec("TURN-1", "TURN-2")
def test_a_resumed_instance_closes_a_turn_a_crashed_instance_left_open(harness):
    seed = SessionLog()
    seed.append(
        "turn/start",
        {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}},
        time=1,
    )
    seed.append(
        "user/message",
        {"content": [text("hi")], "source": {"kind": "user"}},
        time=2,
        surface_op="append",
    )
    seed.append("step/start", {"turn": 1, "step": 1}, time=3)

    async def scenario():
        loop = harness.loop(session=seed)
        assert types(loop.session)[-2:] == ["step/end", "turn/end"]
        assert loop.session[-1]["data"]["reason"] == {"kind": "interrupted"}
        return await loop.send("again")

    assert harness.run(scenario()).turn == 2


def test_a_disposed_instance_refuses_more_turns(harness):
    from reqfold.reference.loop import LoopDisposed

    async def scenario():
        loop = harness.loop()
        loop.dispose()
        with pytest.raises(LoopDisposed):
            await loop.send("hi")

    harness.run(scenario())


def test_a_loop_refuses_a_session_read_under_another_revision(harness):
    from reqfold.reference.revisions import Revision

    with pytest.raises(ValueError, match="session-prefix"):
        AgentLoop(
            provider=harness.client(),
            session=SessionLog(revision=Revision.SESSION_PREFIX),
            revision=Revision.HEADER_EVENTS,
        )


@pytest.mark.spec("TURN-1", "TURN-2", "DERIVE-2", "WIRE-2")
def test_a_resumed_instance_answers_the_tool_calls_a_crashed_turn_left_open(harness):
    seed = SessionLog()
    trigger = {"kind": "message", "source": {"kind": "user"}}
    seed.append("turn/start", {"turn": 1, "trigger": trigger}, time=1)
    seed.append(
        "user/message",
        {"content": [text("go")], "source": {"kind": "user"}},
        time=2,
        surface_op="append",
    )
    seed.append("step/start", {"turn": 1, "step": 1}, time=3)
    calls = [
        {"type": "tool-call", "id": cid, "name": "t", "arguments": "{}"}
        for cid in ("c1", "c2")
    ]
    seed.append(
        "assistant/message",
        {"turn": 1, "step": 1, "content": calls},
        time=4,
        surface_op="append",
    )
    seed.append(
        "tool/call",
        {"turn": 1, "step": 1, "callId": "c1", "name": "t", "arguments": "{}"},
        time=5,
    )

    async def scenario():
        loop = harness.loop(session=seed)
        return loop, await loop.send("again")

    loop, result = harness.run(scenario())
    assert result.kind == "completed"
    assert types(loop.session)[5:9] == [
        "tool/result",
        "tool/result",
        "step/end",
        "turn/end",
    ]
    first, second = loop.session[5], loop.session[6]
    assert (first["data"]["callId"], first["sourceEventSeqs"]) == ("c1", [4])
    assert (second["data"]["callId"], second["sourceEventSeqs"]) == ("c2", [3])
    assert loop.session[8]["data"]["reason"] == {"kind": "interrupted"}
    wire = harness.fake.requests[0].json["messages"]
    assert [m.get("tool_call_id") for m in wire if m["role"] == "tool"] == ["c1", "c2"]
