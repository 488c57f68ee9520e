"""The loop over a session file: persist first, then log (LOG-3, JSONL-2, JSON-1).

An append reaches memory only once its sink has taken it, so the file and
the in-memory log never disagree, whatever the disk does.
"""

from __future__ import annotations

import errno

import pytest
from messages import types

from reqfold.fakes import Reply, ToolCall
from reqfold.reference.loop import PersistenceFailed, Tool, create_session_file
from reqfold.reference.shells.jsonl import load_session_file


class FlakySink:
    """A `JsonlWriter` that fails with ENOSPC while `failing(event)` says so."""

    def __init__(self, writer, failing):
        self.writer = writer
        self.failing = failing
        self.refused = []

    def append(self, events):
        for event in events:
            if self.failing(event):
                self.refused.append(event["type"])
                raise OSError(errno.ENOSPC, "No space left on device")
        self.writer.append(events)


@pytest.mark.spec("LOG-2", "LOG-3", "JSONL-2", "TURN-1", "TURN-2")
def test_a_sink_failure_logs_nothing_and_ends_the_turn_naming_the_persistence_failure(
    harness, tmp_path
):
    path = tmp_path / "session.jsonl"

    async def scenario():
        session, writer = create_session_file(path, session_id="s", created_at=0)
        broken = [True]

        def failing(event):
            return event["type"] == "assistant/message" and bool(
                broken and broken.pop()
            )

        sink = FlakySink(writer, failing)
        loop = harness.loop(session=session, sink=sink)
        first = await loop.send("one")
        second = await loop.send("two")
        return loop, sink, first, second

    loop, sink, first, second = harness.run(scenario())
    assert sink.refused == ["assistant/message"]
    assert first.reason["kind"] == "error"
    assert first.reason["code"] == "PERSISTENCE_FAILED"
    assert "No space left on device" in first.reason["message"]
    assert "assistant/message" in first.reason["message"]
    assert "LOG-2" not in first.reason["message"]
    assert isinstance(first.error, PersistenceFailed)
    assert second.kind == "completed"
    assert load_session_file(path).events == loop.session.events
    assert types(loop.session.events)[:6] == [
        "turn/start",
        "user/message",
        "step/start",
        "request/header",
        "step/end",
        "turn/end",
    ]


@pytest.mark.spec("LOG-3", "JSONL-2", "TURN-1")
def test_a_turn_whose_end_cannot_be_persisted_is_closed_first_by_the_next_turn(
    harness, tmp_path
):
    path = tmp_path / "session.jsonl"

    async def scenario():
        session, writer = create_session_file(path, session_id="s", created_at=0)
        disk_full = [False]

        def failing(event):
            if event["type"] == "assistant/message":
                disk_full[0] = True
            return disk_full[0]

        sink = FlakySink(writer, failing)
        loop = harness.loop(session=session, sink=sink)
        with pytest.raises(PersistenceFailed, match="No space left"):
            await loop.send("one")
        stranded = list(loop.session.events)
        assert load_session_file(path).events == stranded
        with pytest.raises(PersistenceFailed):
            loop.inject("still full")
        disk_full[0] = False
        sink.failing = lambda event: False
        result = await loop.send("two")
        return loop, stranded, result

    loop, stranded, result = harness.run(scenario())
    assert types(stranded)[-1] == "request/header"
    assert result.turn == 2
    assert result.kind == "completed"
    closing = loop.session.events[len(stranded) : len(stranded) + 2]
    assert types(closing) == ["step/end", "turn/end"]
    assert closing[1]["data"]["turn"] == 1
    assert closing[1]["data"]["reason"]["code"] == "PERSISTENCE_FAILED"
    assert load_session_file(path).events == loop.session.events


@pytest.mark.spec("JSON-1", "LOG-3", "DERIVE-2")
def test_a_tool_result_that_is_not_unicode_text_becomes_an_error_result(
    harness, fake, tmp_path
):
    path = tmp_path / "session.jsonl"
    fake.push(Reply(tool_calls=(ToolCall.of("ls", {}, id="c1"),)), Reply(text="ok"))

    async def ls(arguments, context):
        return "file-\udc80.txt"  # a surrogateescape'd file name

    async def scenario():
        session, sink = create_session_file(path, session_id="s", created_at=0)
        loop = harness.loop(
            session=session,
            sink=sink,
            tools=[Tool(name="ls", description="", execute=ls)],
        )
        return loop, await loop.send("list")

    loop, result = harness.run(scenario())
    assert result.kind == "completed"
    answer = next(e for e in loop.session if e["type"] == "tool/result")
    assert answer["data"]["isError"] is True
    assert "JSON-1" in answer["data"]["content"][0]["text"]
    assert "surrogate" in answer["data"]["content"][0]["text"]
    assert load_session_file(path).events == loop.session.events
