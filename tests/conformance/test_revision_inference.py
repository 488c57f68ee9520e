"""Inferring the revision of a log whose storage line names none (issue 10.13).

Unit tests of the pure `infer_revision`, then ``reqfold check`` as a child
process on a real request-messages log written by the reference loop with
the revision left off its storage line.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from reqfold.conformance.check.revision_inference import infer_revision
from reqfold.fakes import FakeProvider, FakeTransport, dump_capture_jsonl
from reqfold.reference.loop import (
    AgentLoop,
    ChatCompletionsClient,
    Framing,
    counter_clock,
)
from reqfold.reference.loop.persistence import create_session_file
from reqfold.reference.revisions import Revision

STORAGE = b'{"type":"session","version":0,"id":"s","createdAt":1}\n'


def event(seq: int, kind: str, data: object) -> bytes:
    line = {"type": kind, "seq": seq, "time": 1, "data": data}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def snapshot(seq: int, header: dict[str, object]) -> bytes:
    return event(seq, "request/header", {"header": header, "reason": "initial"})


USER = {"role": "user", "content": [{"type": "text", "text": "rules"}]}


@pytest.mark.spec("HDR-2", "DELTA-1")
def test_a_message_suffix_names_request_messages_and_the_line_that_told() -> None:
    lines = [
        STORAGE,
        event(0, "turn/start", {"turn": 1}),
        snapshot(1, {"config": {"model": "m"}, "messageSuffix": [USER]}),
    ]
    inference = infer_revision(lines)
    assert inference is not None
    assert inference.revision is Revision.REQUEST_MESSAGES
    assert inference.fitting == (Revision.REQUEST_MESSAGES,)
    assert inference.describe() == (
        "inferred from line 3: a header snapshot carries messageSuffix"
    )


@pytest.mark.spec("PREFIX-2")
def test_a_prefix_delta_fits_only_request_messages() -> None:
    lines = [
        STORAGE,
        snapshot(0, {"config": {"model": "m"}, "messagePrefix": [USER]}),
        event(1, "request/header-delta", {"messagePrefix": []}),
    ]
    inference = infer_revision(lines)
    assert inference is not None
    assert inference.revision is Revision.REQUEST_MESSAGES
    assert inference.line == 3


def test_a_prefix_on_snapshots_alone_is_ambiguous_and_says_which_revisions_fit() -> (
    None
):
    lines = [STORAGE, snapshot(0, {"config": {"model": "m"}, "messagePrefix": [USER]})]
    inference = infer_revision(lines)
    assert inference is not None
    assert inference.ambiguous
    assert inference.revision is Revision.SESSION_PREFIX
    assert inference.fitting == (Revision.REQUEST_MESSAGES, Revision.SESSION_PREFIX)
    assert inference.describe() == (
        "default; not declared, and request-messages and session-prefix fit"
        " (line 2: a header snapshot carries messagePrefix)"
    )


def test_headers_without_message_fields_fit_every_revision() -> None:
    inference = infer_revision([STORAGE, snapshot(0, {"config": {"model": "m"}})])
    assert inference is not None
    assert inference.fitting == tuple(Revision)
    assert inference.revision is Revision.SESSION_PREFIX
    assert inference.line is None
    assert inference.describe() == "default; not declared, and every revision fits"


def test_a_declared_revision_is_not_inferred() -> None:
    declared = STORAGE.replace(b"}\n", b',"revision":"header-events"}\n')
    assert infer_revision([declared, snapshot(0, {"config": {}})]) is None


def test_a_message_field_named_outside_header_events_is_no_evidence() -> None:
    said = event(0, "user/message", {"content": [{"type": "text", "text": "x"}]})
    said = said.replace(b'"x"', b'"messageSuffix"')
    inference = infer_revision([STORAGE, said])
    assert inference is not None
    assert inference.fitting == tuple(Revision)


def test_a_line_read_in_pieces_gives_no_evidence_and_keeps_the_numbering() -> None:
    long_snapshot = snapshot(0, {"config": {"model": "m" * 100}, "messageSuffix": []})
    pieces = [long_snapshot[:40], long_snapshot[40:]]
    delta = event(1, "request/header-delta", {"messagePrefix": []})
    inference = infer_revision([STORAGE, *pieces, delta])
    assert inference is not None
    assert (inference.revision, inference.line) == (Revision.REQUEST_MESSAGES, 3)
    assert infer_revision([STORAGE, *pieces]) == infer_revision([STORAGE])


# ------------------------------------------------------------- the command


def write_undeclared_request_messages_log(folder: Path) -> tuple[Path, Path]:
    """Three turns of the reference loop at request-messages; no revision line."""
    fake = FakeProvider("deepseek")
    log = folder / "session.jsonl"

    async def session() -> None:
        async with ChatCompletionsClient(
            base_url="http://fake", api_key="k", transport=FakeTransport(fake)
        ) as client:
            revision = Revision.REQUEST_MESSAGES
            log_session, sink = create_session_file(
                log, session_id="s", created_at=1, revision=revision
            )
            loop = AgentLoop(
                provider=client,
                model="deepseek-chat",
                system="You help.",
                revision=revision,
                clock=counter_clock(),
                session=log_session,
                sink=sink,
            )

            async def framing(context, seed, next):  # type: ignore[no-untyped-def]
                return Framing(after=[USER])

            loop.hooks.request_messages.register(framing)
            for prompt in ("one", "two", "three"):
                await loop.send(prompt)

    asyncio.run(session())
    lines = log.read_bytes().split(b"\n", 1)
    storage = json.loads(lines[0])
    del storage["revision"]
    log.write_bytes(json.dumps(storage).encode() + b"\n" + lines[1])
    capture = folder / "capture.jsonl"
    capture.write_text(dump_capture_jsonl(fake.requests), encoding="utf-8")
    return log, capture


def check(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reqfold.conformance.cli", "check", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.spec("REQ-4")
def test_check_reads_an_undeclared_request_messages_log_by_inference(
    tmp_path: Path,
) -> None:
    log, capture = write_undeclared_request_messages_log(tmp_path)
    result = check(log, "--requests", capture)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "revision request-messages (inferred from line " in result.stdout
    assert "3 steps dispatched, 3 matched to captured requests" in result.stdout


@pytest.mark.slow
def test_the_wrong_revision_still_counts_the_steps_that_dispatched(
    tmp_path: Path,
) -> None:
    log, capture = write_undeclared_request_messages_log(tmp_path)
    result = check(log, "--requests", capture, "--revision", "session-prefix")
    assert result.returncode == 1
    assert "revision session-prefix (--revision)" in result.stdout
    assert "3 steps dispatched, 0 matched to captured requests" in result.stdout
    assert "3 of them cannot be rebuilt" in result.stdout
    as_json = check(log, "--format", "json", "--revision", "session-prefix")
    report = json.loads(as_json.stdout)
    assert report["steps_dispatched"] == 3
    assert report["steps_unrebuilt"] == 3
    inferred = json.loads(check(log, "--format", "json").stdout)
    assert inferred["revision"] == "request-messages"
    assert inferred["revision_source"].startswith("inferred from line ")
