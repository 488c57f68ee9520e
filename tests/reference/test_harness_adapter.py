"""`reqfold.reference.harness_adapter`: the reference loop behind the harness methods.

Most tests drive `HarnessServer` in process (its ``handle`` is the protocol
as async calls, its ``notify`` callback the notifications); the last ones
drive ``python -m reqfold.reference.harness_adapter`` as a child process over its
pipes, as the suite drives any adapter. Either way the loop talks to the
fake provider over real HTTP (uvicorn on a loopback socket), and every
test waits on notifications, never on time.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from messages import types, user

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.errors import AdapterCrashed
from reqfold.fakes import FakeProvider, Reply, ToolCall
from reqfold.fakes.server import running_server
from reqfold.reference.loop import AgentLoop
from reqfold.reference.reconstruct import compare_with_captures
from reqfold.reference.revisions import Revision
from reqfold.reference.shells.adapter import RpcError
from reqfold.reference.shells.harness_adapter import STATE_ERROR, HarnessServer
from reqfold.reference.shells.jsonl import load_session_file

WAIT_SECONDS = 20
"""The most a test waits for a notification before it fails (not a sleep)."""

MODEL = "deepseek-chat"
LOOKUP = {
    "name": "lookup",
    "description": "Look a key up.",
    "parameters": {"type": "object", "properties": {"key": {"type": "string"}}},
    "results": ["a is 42", "a is still 42"],
}
NOTE = {
    "name": "note",
    "description": "Take a note.",
    "parameters": {"type": "object", "properties": {}},
    "results": [],
}


def returns(*texts):
    return {"do": "return", "messages": [user(text) for text in texts]}


def prefix(ident, *calls):
    return {"id": ident, "seam": "session-prefix", "calls": list(calls)}


def lookup_call(call_id="call_1"):
    return Reply(
        text="Looking.", tool_calls=(ToolCall.of("lookup", {"key": "a"}, id=call_id),)
    )


# ------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def served():
    """One fake provider served by uvicorn for the module's tests."""
    provider = FakeProvider("deepseek")
    with running_server(provider) as base:
        yield provider, base


@pytest.fixture
def fake(served):
    """The served fake, with no cache, captures or scripted replies left over."""
    provider, _ = served
    provider.reset(cache=True, capture=True, script=True)
    return provider


@pytest.fixture
def url(fake, served):
    return served[1]


def start_params(url, instance="i1", session="s1", **overrides):
    """``instance/start`` params: a terse loop with one tool, over `url`."""
    return {
        "session": session,
        "instance": instance,
        "revision": "session-prefix",
        "provider": {"baseUrl": url, "apiKey": "k-" + session, "dialect": "deepseek"},
        "config": {"model": MODEL},
        "system": "You are terse.",
        "tools": [LOOKUP],
        "contributors": [],
        **overrides,
    }


class Driver:
    """A `HarnessServer` with a notification inbox and request helpers."""

    def __init__(self, url, folder, loop_class=AgentLoop, server_class=HarnessServer):
        self.url = url
        self.folder = folder
        self.notes: list[tuple[str, dict[str, Any]]] = []
        self.taken = 0
        self.server = server_class(self._notify, loop_class=loop_class)
        self._arrived = asyncio.Event()

    def _notify(self, method, params):
        self.notes.append((method, params))
        self._arrived.set()

    async def call(self, method, **params):
        return await self.server.handle(method, params)

    async def error(self, method, **params):
        with pytest.raises(RpcError) as caught:
            await self.server.handle(method, params)
        return caught.value

    async def wait(self, method, **match):
        """The next notification `method` matching `match`; earlier ones are skipped."""
        async with asyncio.timeout(WAIT_SECONDS):
            while True:
                for index in range(self.taken, len(self.notes)):
                    name, params = self.notes[index]
                    if name == method and match.items() <= params.items():
                        self.taken = index + 1
                        return params
                self._arrived.clear()
                await self._arrived.wait()

    async def open(self, session="s1", revision="session-prefix", **extra):
        log = str(self.folder / f"{session}.jsonl")
        assert await self.call(
            "session/open", session=session, log=log, revision=revision, **extra
        ) == {"log": log}
        return log

    async def start(self, instance="i1", session="s1", **overrides):
        params = start_params(self.url, instance, session, **overrides)
        assert await self.server.handle("instance/start", params) == {}

    async def turn(self, instance, prompt):
        """Send `prompt` and return the turn's ``turn/ended`` params."""
        assert await self.call("instance/send", instance=instance, prompt=prompt) == {}
        return await self.wait("turn/ended", instance=instance)

    def started(self, instance=None):
        """(contributor, call) of every contributor/started so far."""
        return [
            (params["contributor"], params["call"])
            for name, params in self.notes
            if name == "contributor/started"
            and (instance is None or params["instance"] == instance)
        ]


def drive(url, folder, scenario, loop_class=AgentLoop, server_class=HarnessServer):
    """Run `scenario(driver)` on a fresh event loop; close the server after."""

    async def main():
        driver = Driver(url, folder, loop_class, server_class)
        try:
            return await scenario(driver)
        finally:
            await driver.server.close()

    return asyncio.run(main())


def mentions(request, text):
    """Whether a captured request's messages carry `text` anywhere."""
    return text in json.dumps(request.json["messages"])


def events(log):
    return load_session_file(log).events


def of_type(log, kind):
    return [event for event in events(log) if event["type"] == kind]


def assert_rebuilds(log, fake, revision=Revision.SESSION_PREFIX):
    """Every captured request equals its rebuild from the log alone."""
    captured = [request.json for request in fake.requests]
    assert compare_with_captures(events(log), captured, revision) == []


# ------------------------------------------------------------------ in process


def test_initialize_declares_both_capabilities_and_codec_methods_still_answer(
    url, tmp_path
):
    async def scenario(driver):
        hello = await driver.call("initialize", protocolVersion=1)
        diff = await driver.call(
            "codec/diff",
            prev={"config": {"model": "a"}},
            next={"config": {"model": "b"}},
        )
        wrong = await driver.error("initialize", protocolVersion=9)
        unknown = await driver.error("instance/fly", instance="i1")
        return hello, diff, wrong, unknown

    hello, diff, wrong, unknown = drive(url, tmp_path, scenario)
    assert hello["name"] == "reqfold-reference"
    assert hello["capabilities"] == ["codec", "harness", "strict"]
    assert hello["revisions"] == [revision.value for revision in Revision]
    assert diff == {"delta": {"config": {"model": "b"}}}
    assert wrong.code == -32602
    assert unknown.code == -32601


@pytest.mark.spec("PREFIX-1", "REQ-5", "CHECK-1")
def test_a_turn_runs_its_tool_calls_and_reports_its_end_with_the_logged_reason(
    fake, url, tmp_path
):
    fake.push(lookup_call(), Reply(text="a is 42."))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[
                prefix("rules", returns("RULES")),
                prefix("skills", returns("SKILLS")),
            ]
        )
        return log, await driver.turn("i1", "what is a?"), driver.started()

    log, ended, started = drive(url, tmp_path, scenario)
    assert ended == {"instance": "i1", "turn": 1, "reason": {"kind": "completed"}}
    assert started == [("rules", 1), ("skills", 1)]
    (result,) = of_type(log, "tool/result")
    assert result["data"]["content"] == [{"type": "text", "text": "a is 42"}]
    (header,) = of_type(log, "request/header")
    assert header["data"]["header"]["messagePrefix"] == [user("RULES"), user("SKILLS")]
    assert len(fake.requests) == 2
    for request in fake.requests:
        assert request.json["messages"][1:3] == [
            {"role": "user", "content": "RULES"},
            {"role": "user", "content": "SKILLS"},
        ]
    assert_rebuilds(log, fake)


@pytest.mark.spec("PREFIX-5")
def test_a_cancel_inside_a_blocking_contributor_ends_the_turn_aborted_and_the_next_turn_recomposes(  # noqa: E501
    fake, url, tmp_path
):
    fake.push(Reply(text="hello"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[
                prefix(
                    "slow",
                    {"do": "block", "messages": [user("LATE")], "onAbort": "throw"},
                    returns("SECOND"),
                )
            ]
        )
        assert await driver.call("instance/send", instance="i1", prompt="hi") == {}
        await driver.wait("contributor/started", contributor="slow", call=1)
        assert await driver.call("instance/cancel", instance="i1", reason="esc") == {}
        aborted = await driver.wait("turn/ended", instance="i1")
        completed = await driver.turn("i1", "hi again")
        return log, aborted, completed, driver.started()

    log, aborted, completed, started = drive(url, tmp_path, scenario)
    assert aborted == {
        "instance": "i1",
        "turn": 1,
        "reason": {"kind": "aborted", "reason": "esc"},
    }
    assert completed["turn"] == 2
    assert completed["reason"] == {"kind": "completed"}
    assert started == [("slow", 1), ("slow", 2)]
    turn_one = [e["type"] for e in events(log) if e["data"].get("turn") == 1]
    assert "step/start" not in turn_one
    (header,) = of_type(log, "request/header")
    assert header["data"]["header"]["messagePrefix"] == [user("SECOND")]
    assert len(fake.requests) == 1
    assert_rebuilds(log, fake)


@pytest.mark.spec("PREFIX-5")
def test_a_sentinel_handed_back_after_a_dispose_is_never_logged_or_sent(
    fake, url, tmp_path
):
    sentinel = "SENTINEL-7f3a"

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[
                prefix(
                    "slow",
                    {
                        "do": "block",
                        "messages": [user("REAL")],
                        "onAbort": "sentinel",
                        "sentinel": [user(sentinel)],
                    },
                )
            ]
        )
        await driver.call("instance/send", instance="i1", prompt="hi")
        await driver.wait("contributor/started", contributor="slow")
        await driver.call("instance/dispose", instance="i1")
        ended = await driver.wait("turn/ended", instance="i1")
        refused = await driver.error("instance/send", instance="i1", prompt="again")
        return log, ended, refused

    log, ended, refused = drive(url, tmp_path, scenario)
    assert ended["reason"] == {"kind": "disposed"}
    assert refused.code == STATE_ERROR
    assert sentinel not in Path(log).read_text(encoding="utf-8")
    assert fake.requests == []


@pytest.mark.spec("PREFIX-1")
def test_a_released_contributor_returns_its_messages_and_a_second_release_is_refused(
    fake, url, tmp_path
):
    fake.push(Reply(text="ok"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[prefix("slow", {"do": "block", "messages": [user("SLOW")]})]
        )
        idle = await driver.error(
            "contributor/release", instance="i1", contributor="slow"
        )
        await driver.call("instance/send", instance="i1", prompt="hi")
        await driver.wait("contributor/started", contributor="slow")
        busy = await driver.error("instance/send", instance="i1", prompt="too soon")
        await driver.call("contributor/release", instance="i1", contributor="slow")
        again = await driver.error(
            "contributor/release", instance="i1", contributor="slow"
        )
        unknown = await driver.error(
            "contributor/release", instance="i1", contributor="x"
        )
        ended = await driver.wait("turn/ended", instance="i1")
        return log, ended, [idle.code, busy.code, again.code, unknown.code]

    log, ended, codes = drive(url, tmp_path, scenario)
    assert ended["reason"] == {"kind": "completed"}
    assert codes == [STATE_ERROR, STATE_ERROR, STATE_ERROR, -32602]
    (header,) = of_type(log, "request/header")
    assert header["data"]["header"]["messagePrefix"] == [user("SLOW")]
    assert_rebuilds(log, fake)


@pytest.mark.spec("PREFIX-5")
def test_a_throwing_contributor_ends_the_turn_with_its_message_and_caches_nothing(
    fake, url, tmp_path
):
    fake.push(Reply(text="ok"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[
                prefix(
                    "flaky",
                    {"do": "throw", "message": "catalog offline"},
                    returns("OK"),
                )
            ]
        )
        failed = await driver.turn("i1", "hi")
        recovered = await driver.turn("i1", "hi")
        return log, failed, recovered

    log, failed, recovered = drive(url, tmp_path, scenario)
    assert failed["reason"]["kind"] == "error"
    assert failed["reason"]["message"] == "catalog offline"
    assert recovered["reason"] == {"kind": "completed"}
    (header,) = of_type(log, "request/header")
    assert header["data"]["header"]["messagePrefix"] == [user("OK")]
    assert_rebuilds(log, fake)


@pytest.mark.spec("PREFIX-4")
def test_an_appending_contributor_logs_its_text_before_the_first_requests_boundary(
    fake, url, tmp_path
):
    fake.push(Reply(text="ok"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[
                prefix(
                    "memo", {"do": "append", "text": "MEMO", "messages": [user("P")]}
                )
            ]
        )
        await driver.turn("i1", "hi")
        return log

    log = drive(url, tmp_path, scenario)
    kinds = types(events(log))
    assert kinds.index("context/message") < kinds.index("step/start")
    (request,) = fake.requests
    assert mentions(request, "MEMO")
    assert_rebuilds(log, fake)


@pytest.mark.spec("PREFIX-6", "WRITER-1")
def test_a_new_instance_over_the_session_recomposes_and_logs_a_resume_snapshot(
    fake, url, tmp_path
):
    fake.push(Reply(text="one"), Reply(text="two"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(contributors=[prefix("rules", returns("V1"), returns("V2"))])
        await driver.turn("i1", "first")
        await driver.start(
            instance="i2", contributors=[prefix("rules", returns("V1"), returns("V2"))]
        )
        refused = await driver.error("instance/send", instance="i1", prompt="old")
        ended = await driver.turn("i2", "second")
        return log, ended, refused, driver.started()

    log, ended, refused, started = drive(url, tmp_path, scenario)
    assert ended["turn"] == 2
    assert refused.code == STATE_ERROR  # the suite's new instance retired i1
    assert started == [("rules", 1), ("rules", 1)]  # counted per instance
    headers = of_type(log, "request/header")
    assert [h["data"]["reason"] for h in headers] == ["initial", "resume"]
    times = [event["time"] for event in events(log)]
    assert times == sorted(set(times))  # one clock per session, across instances
    assert_rebuilds(log, fake)


@pytest.mark.spec("REQ-1")
def test_a_step_start_append_joins_the_next_request_not_the_current_one(
    fake, url, tmp_path
):
    fake.push(lookup_call(), Reply(text="done"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[
                {
                    "id": "clock",
                    "seam": "step-start",
                    "calls": [{"do": "append", "text": "TICK"}, {"do": "none"}],
                }
            ]
        )
        await driver.turn("i1", "what is a?")
        return log, driver.started()

    log, started = drive(url, tmp_path, scenario)
    assert started == [("clock", 1), ("clock", 2)]
    first, second = fake.requests
    assert not mentions(first, "TICK")
    assert mentions(second, "TICK")
    assert len(of_type(log, "context/message")) == 1
    assert_rebuilds(log, fake)


@pytest.mark.spec("RMSG-1", "RMSG-2")
def test_request_message_framing_concatenates_contributors_in_registration_order(
    fake, url, tmp_path
):
    fake.push(Reply(text="ok"))

    async def scenario(driver):
        log = await driver.open(revision="request-messages")
        await driver.start(
            revision="request-messages",
            contributors=[
                {
                    "id": "a",
                    "seam": "request-messages",
                    "calls": [
                        {"do": "return", "before": [user("A1")], "after": [user("A2")]}
                    ],
                },
                {
                    "id": "b",
                    "seam": "request-messages",
                    "calls": [{"do": "return", "before": [user("B1")], "after": []}],
                },
            ],
        )
        await driver.turn("i1", "hi")
        return log

    log = drive(url, tmp_path, scenario)
    (header,) = of_type(log, "request/header")
    assert header["data"]["header"]["messagePrefix"] == [user("A1"), user("B1")]
    assert header["data"]["header"]["messageSuffix"] == [user("A2")]
    assert_rebuilds(log, fake, Revision.REQUEST_MESSAGES)


@pytest.mark.spec("WRITER-3", "WRITER-4")
def test_an_update_changes_what_the_next_request_carries_and_the_log_records_it(
    fake, url, tmp_path
):
    fake.push(Reply(text="1"), Reply(text="2"), Reply(text="3"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(tools=[LOOKUP, NOTE], toolOrder=["note", "lookup"])
        await driver.turn("i1", "one")
        await driver.call(
            "instance/update",
            instance="i1",
            system="You are verbose.",
            config={"model": MODEL, "temperature": 0.5},
        )
        await driver.turn("i1", "two")
        await driver.call("instance/update", instance="i1", toolOrder=None)
        await driver.turn("i1", "three")
        return log

    log = drive(url, tmp_path, scenario)
    header_events = [
        event
        for event in events(log)
        if event["type"] in ("request/header", "request/header-delta")
    ]
    initial, delta, fallback = header_events
    assert initial["data"]["reason"] == "initial"
    assert set(delta["data"]) == {"system", "config"}
    assert delta["data"]["config"]["temperature"] == 0.5
    assert fallback["data"]["reason"] == "fallback"
    assert [t["name"] for t in fallback["data"]["header"]["tools"]] == [
        "lookup",
        "note",
    ]
    second, third = fake.requests[1], fake.requests[2]
    assert second.json["temperature"] == 0.5
    assert third.json["temperature"] == 0.5  # the update holds for later requests
    assert_rebuilds(log, fake)


@pytest.mark.spec("TURN-4")
def test_an_inject_while_idle_is_logged_in_a_one_shot_turn_that_calls_no_model(
    fake, url, tmp_path
):
    async def scenario(driver):
        log = await driver.open()
        await driver.start()
        assert await driver.call("instance/inject", instance="i1", text="FYI") == {}
        await driver.call("instance/dispose", instance="i1")
        refused = await driver.error("instance/inject", instance="i1", text="late")
        return log, refused

    log, refused = drive(url, tmp_path, scenario)
    kinds = types(events(log))
    assert kinds == ["turn/start", "context/message", "turn/end"]
    assert events(log)[0]["data"]["trigger"]["kind"] == "injection"
    assert refused.code == STATE_ERROR
    assert fake.requests == []


@pytest.mark.spec("PREFIX-7", "SURF-3")
def test_a_compact_rewrites_the_surface_at_the_next_step_and_never_the_prefix(
    fake, url, tmp_path
):
    fake.push(Reply(text="one"), Reply(text="two"), Reply(text="three"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(contributors=[prefix("rules", returns("RULES"))])
        await driver.turn("i1", "first")
        await driver.turn("i1", "second")
        assert await driver.call("instance/compact", instance="i1") == {}
        await driver.turn("i1", "third")
        return log

    log = drive(url, tmp_path, scenario)
    (replace,) = [
        event
        for event in events(log)
        if isinstance(event.get("surfaceOp"), dict)
        and event["surfaceOp"]["op"] == "replace"
    ]
    assert replace["data"]["source"] == {"kind": "plugin", "plugin": "compact"}
    assert len(of_type(log, "compact/start")) == 1
    assert len(of_type(log, "request/header")) == 1  # no header event after it
    assert len(of_type(log, "request/header-delta")) == 0
    third = fake.requests[2].json["messages"]
    assert third[1] == {"role": "user", "content": "RULES"}
    assert_rebuilds(log, fake)


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("instance/send", {"instance": "nobody", "prompt": "hi"}, -32602),
        ("instance/send", {"instance": "i1"}, -32602),
        ("instance/cancel", {"instance": "i1", "reason": 5}, -32602),
        ("session/open", {"session": "s1", "log": "x", "revision": "r9"}, -32602),
        (
            "session/open",
            {"session": "s1", "log": "x", "revision": "session-prefix"},
            STATE_ERROR,
        ),
        ("instance/start", {"instance": "i1"}, -32602),
        ("instance/update", {"instance": "i1", "tools": [{"name": "x"}]}, -32602),
        ("instance/inject", {"instance": "i1", "text": "\ud800"}, -32602),
    ],
)
def test_malformed_params_and_disallowed_requests_are_errors_that_change_nothing(
    url, tmp_path, method, params, code
):
    async def scenario(driver):
        await driver.open()
        await driver.start()
        return await driver.error(method, **params)

    assert drive(url, tmp_path, scenario).code == code


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"instance": "i1"}, "already started"),
        ({"revision": "header-events"}, "differs from the session"),
        ({"session": "s9"}, "unknown session"),
        (
            {"provider": {"baseUrl": "x", "apiKey": "", "dialect": "anthropic"}},
            "dialect",
        ),
        ({"contributors": [prefix("p")]}, "has no calls"),
        (
            {"contributors": [prefix("p", {"do": "dance"})]},
            "unknown session-prefix call",
        ),
        (
            {
                "contributors": [
                    {"id": "r", "seam": "request-messages", "calls": [{"do": "return"}]}
                ]
            },
            "does not exist in revision",
        ),
    ],
)
def test_an_instance_start_that_cannot_be_honoured_is_refused_and_says_why(
    url, tmp_path, overrides, problem
):
    async def scenario(driver):
        await driver.open()
        await driver.start()
        with pytest.raises(RpcError) as caught:
            await driver.start(**{"instance": "i2", **overrides})
        return caught.value

    error = drive(url, tmp_path, scenario)
    assert error.code in (-32602, STATE_ERROR)
    assert problem in error.message


@pytest.mark.spec("LOG-2", "JSONL-5", "TURN-1")
def test_a_new_instance_over_a_busy_session_starts_once_the_old_turn_has_ended(
    fake, url, tmp_path
):
    fake.push(Reply(text="ok"))

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[prefix("slow", {"do": "block", "messages": []})]
        )
        await driver.call("instance/send", instance="i1", prompt="hi")
        await driver.wait("contributor/started", instance="i1")
        await driver.start(instance="i2")  # no dispose first: the adapter retires i1
        retired = driver.notes[-1]
        ended = await driver.turn("i2", "again")
        return log, retired, ended

    log, retired, ended = drive(url, tmp_path, scenario)
    assert retired == (
        "turn/ended",
        {"instance": "i1", "turn": 1, "reason": {"kind": "disposed"}},
    )
    assert ended["turn"] == 2
    assert [e["seq"] for e in events(log)] == list(range(len(events(log))))
    assert_rebuilds(log, fake)


def test_a_send_that_fails_before_its_turn_starts_reports_not_started(url, tmp_path):
    class Unstartable(AgentLoop):
        async def send(self, content, *, source=None):
            raise RuntimeError("no turns today")

    async def scenario(driver):
        log = await driver.open()
        await driver.start()
        return log, await driver.turn("i1", "hi")

    log, ended = drive(url, tmp_path, scenario, loop_class=Unstartable)
    assert ended == {
        "instance": "i1",
        "turn": None,
        "reason": {"kind": "not-started", "message": "no turns today"},
    }
    assert events(log) == []


def test_closing_the_server_disposes_a_turn_blocked_in_a_contributor(
    fake, url, tmp_path
):
    async def scenario(driver):
        await driver.open()
        await driver.start(
            contributors=[prefix("slow", {"do": "block", "messages": []})]
        )
        await driver.call("instance/send", instance="i1", prompt="hi")
        await driver.wait("contributor/started", contributor="slow")
        assert await driver.call("shutdown") is None
        ended = await driver.wait("turn/ended", instance="i1")
        closed = await driver.error("instance/send", instance="i1", prompt="hi")
        return ended, closed

    ended, closed = drive(url, tmp_path, scenario)
    assert ended["reason"] == {"kind": "disposed"}
    assert closed.code == STATE_ERROR


# ------------------------------------------------------------------ over stdio


def next_notification(child: StdioConnection, method: str) -> Any:
    """The params of the next notification `method`, skipping the others."""
    while (note := child.receive_notification())["method"] != method:
        pass
    return note["params"]


@pytest.fixture
def child() -> Iterator[StdioConnection]:
    """``python -m reqfold.reference.harness_adapter``, spoken to over its pipes."""
    running = StdioConnection(
        [sys.executable, "-m", "reqfold.reference.harness_adapter"],
        timeout=WAIT_SECONDS,
    )
    yield running
    running.kill()


@pytest.mark.slow
@pytest.mark.spec("PREFIX-5")
def test_the_stdio_adapter_keeps_reading_and_lands_a_cancel_inside_a_blocked_call(
    fake, url, tmp_path, child
):
    fake.push(Reply(text="hello"))
    log = str(tmp_path / "s1.jsonl")
    initialized = child.request("initialize", {"protocolVersion": 1})
    assert initialized["result"]["capabilities"] == ["codec", "harness", "strict"]
    assert child.request(
        "session/open", {"session": "s1", "log": log, "revision": "session-prefix"}
    )["result"] == {"log": log}
    contributor = prefix("slow", {"do": "block", "messages": [user("X")]}, returns("Y"))
    started = child.request(
        "instance/start", start_params(url, contributors=[contributor])
    )
    assert started["result"] == {}
    assert (
        child.request("instance/send", {"instance": "i1", "prompt": "hi"})["result"]
        == {}
    )
    assert next_notification(child, "contributor/started") == {
        "instance": "i1",
        "contributor": "slow",
        "call": 1,
    }
    assert (
        child.request("instance/send", {"instance": "i1", "prompt": "no"})["error"][
            "code"
        ]
        == -32002
    )
    assert child.request("instance/cancel", {"instance": "i1"})["result"] == {}
    assert next_notification(child, "turn/ended")["reason"] == {"kind": "aborted"}
    assert (
        child.request("instance/send", {"instance": "i1", "prompt": "hi"})["result"]
        == {}
    )
    assert next_notification(child, "turn/ended")["reason"] == {"kind": "completed"}
    assert child.request("shutdown", {})["result"] is None
    child.end_input()
    assert child.wait() == 0
    assert_rebuilds(log, fake)


@pytest.mark.slow
def test_the_stdio_adapter_answers_bad_lines_and_at_end_of_input_disposes_and_exits_0(
    url, tmp_path, child
):
    assert child.send_line(b"{not json")["error"]["code"] == -32700
    refused = child.send_line(b'{"jsonrpc": "2.0", "id": true, "method": "initialize"}')
    assert refused["id"] is None
    assert refused["error"]["code"] == -32600
    diff = child.request(
        "codec/diff",
        {"prev": {"config": {"model": "a"}}, "next": {"config": {"model": "a"}}},
    )
    assert diff["result"] == {"delta": None}
    log = str(tmp_path / "s1.jsonl")
    child.request(
        "session/open", {"session": "s1", "log": log, "revision": "session-prefix"}
    )
    child.request(
        "instance/start",
        start_params(
            url,
            system="",
            tools=[],
            contributors=[prefix("slow", {"do": "block", "messages": []})],
        ),
    )
    child.request("instance/send", {"instance": "i1", "prompt": "hi"})
    next_notification(child, "contributor/started")
    child.end_input()
    assert next_notification(child, "turn/ended")["reason"] == {"kind": "disposed"}
    assert child.wait() == 0
    with pytest.raises(AdapterCrashed):  # stdout ended: nothing after the last line
        child.receive_notification()


@pytest.mark.slow
def test_the_stdio_adapter_exits_1_without_a_traceback_once_its_stdout_is_gone():
    process = subprocess.Popen(
        [sys.executable, "-m", "reqfold.reference.harness_adapter"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()
    request = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}\n'
    _, err = process.communicate(request * 3, timeout=WAIT_SECONDS)
    assert process.returncode == 1
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err
    assert b"stdout is gone" in err


@pytest.mark.spec("PREFIX-1")
def test_a_release_that_arrives_before_the_call_blocks_is_kept(fake, url, tmp_path):
    fake.push(Reply(text="ok"))

    class SlowToBlock(HarnessServer):
        async def block(self, contributor, context):
            # Let every request already sent be handled first: the release
            # arrives while this call has started but not yet blocked.
            for _ in range(20):
                await asyncio.sleep(0)
            return await super().block(contributor, context)

    async def scenario(driver):
        log = await driver.open()
        await driver.start(
            contributors=[prefix("slow", {"do": "block", "messages": [user("SLOW")]})]
        )
        await driver.call("instance/send", instance="i1", prompt="hi")
        await driver.wait("contributor/started", contributor="slow")
        await driver.call("contributor/release", instance="i1", contributor="slow")
        ended = await driver.wait("turn/ended", instance="i1")
        return log, ended

    log, ended = drive(url, tmp_path, scenario, server_class=SlowToBlock)
    assert ended["reason"] == {"kind": "completed"}
    (header,) = of_type(log, "request/header")
    assert header["data"]["header"]["messagePrefix"] == [user("SLOW")]


@pytest.mark.spec("LOG-6", "WRITER-1")
def test_a_seeded_session_starts_with_the_seed_and_its_first_request_logs_resume(
    fake, url, tmp_path
):
    fake.push(Reply(text="one"), Reply(text="two"))

    async def first(driver):
        log = await driver.open()
        await driver.start()
        await driver.turn("i1", "SEEDED-HELLO")
        return log

    (tmp_path / "a").mkdir()
    seed = drive(url, tmp_path / "a", first)

    async def second(driver):
        log = await driver.open(seed=seed)
        await driver.start()
        ended = await driver.turn("i1", "after the seed")
        bad = await driver.error(
            "session/open",
            session="s2",
            log=str(tmp_path / "b" / "s2.jsonl"),
            revision="session-prefix",
            seed=str(tmp_path / "missing.jsonl"),
        )
        return log, ended, bad

    (tmp_path / "b").mkdir()
    log, ended, bad = drive(url, tmp_path / "b", second)
    assert ended["reason"] == {"kind": "completed"}
    loaded = load_session_file(log)
    seeded = load_session_file(seed).events
    assert loaded.storage["seedLength"] == len(seeded)
    assert loaded.events[: len(seeded)] == seeded
    snapshots = [
        e for e in loaded.events[len(seeded) :] if e["type"] == "request/header"
    ]
    assert [s["data"]["reason"] for s in snapshots] == ["resume"]
    assert mentions(fake.last_request, "SEEDED-HELLO")
    assert bad.code == -32602
