"""Logs the reference harness writes pass the checker, with its captured requests."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
from messages import user

from reqfold.conformance.check import check_lines, read_captures
from reqfold.fakes import FakeProvider, FakeTransport, dump_captured_request
from reqfold.reference.loop import (
    AgentLoop,
    ChatCompletionsClient,
    Framing,
    counter_clock,
)
from reqfold.reference.revisions import Revision
from reqfold.reference.shells.jsonl import dump_line, make_storage_line


@pytest.mark.slow
@pytest.mark.spec(
    "REQ-1",
    "REQ-2",
    "REQ-5",
    "WRITER-1",
    "WRITER-3",
    "WRITER-4",
    "WRITER-6",
    "PREFIX-2",
    "PREFIX-6",
    "CHECK-1",
)
def test_the_demo_session_passes_and_every_request_rebuilds(tmp_path: Path) -> None:
    log, requests = tmp_path / "demo.jsonl", tmp_path / "requests.jsonl"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "reqfold.conformance.cli",
            "demo",
            "--log",
            str(log),
            "--requests",
            str(requests),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    with log.open("rb") as lines, requests.open("rb") as captures:
        report = check_lines(lines, captures=read_captures(captures), strict=True)
    assert report.findings == []
    assert report.summary.requests_matched == report.summary.steps_dispatched > 0


async def two_turns(revision: Revision, fake: FakeProvider) -> AgentLoop:
    client = ChatCompletionsClient(
        base_url="http://fake.test", transport=FakeTransport(fake)
    )
    loop = AgentLoop(
        provider=client,
        model="deepseek-chat",
        system="Be brief.",
        revision=revision,
        clock=counter_clock(),
    )
    if revision is Revision.REQUEST_MESSAGES:

        async def frame(context: object, framing: Framing, next: object) -> Framing:
            base = await next()  # type: ignore[operator]
            return Framing(before=[user("reminder"), *base.before], after=base.after)

        loop.hooks.request_messages.register(frame)
    try:
        await loop.send("hi")
        loop.system = "Be brief.\nBe kind."
        await loop.send("again")
    finally:
        await client.aclose()
    return loop


@pytest.mark.spec("REQ-3", "REQ-4", "REQ-5", "WRITER-3", "CHECK-1")
@pytest.mark.parametrize("revision", list(Revision), ids=[r.value for r in Revision])
def test_reference_loop_logs_pass_in_every_revision(revision: Revision) -> None:
    fake = FakeProvider()
    loop = asyncio.run(two_turns(revision, fake))
    storage = make_storage_line("s", 0, revision=revision.value)
    lines = [dump_line(storage).encode()]
    lines += [dump_line(event).encode() for event in loop.session]
    captures = [
        json.dumps(dump_captured_request(record)).encode() for record in fake.requests
    ]
    report = check_lines(lines, captures=read_captures(captures), strict=True)
    assert report.findings == []
    assert report.summary.requests_matched == len(captures) == 2
    assert any(e["type"] == "request/header-delta" for e in loop.session)
