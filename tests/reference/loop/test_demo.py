"""`reqfold demo`: a deterministic, conforming log and the fake's captured requests."""

from __future__ import annotations

import json

import pytest

from reqfold.conformance.cli import main
from reqfold.reference.json_values import canonical_json
from reqfold.reference.reconstruct import compare_with_captures, header_events
from reqfold.reference.shells.jsonl import load_session_file


def run_demo(tmp_path, name):
    (tmp_path / name).mkdir()
    log = tmp_path / name / "session.jsonl"
    requests = tmp_path / name / "requests.jsonl"
    status = main(["demo", "--log", str(log), "--requests", str(requests)])
    return status, log, requests


@pytest.mark.spec(
    "REQ-1", "REQ-5", "WRITER-1", "WRITER-3", "WRITER-4", "PREFIX-5", "PREFIX-6"
)
def test_the_demo_writes_a_log_that_rebuilds_every_captured_request(tmp_path, capsys):
    status, log, requests = run_demo(tmp_path, "a")
    out = capsys.readouterr().out
    assert status == 0
    assert "Reconstruction: all 7 requests" in out
    assert "aborted (user cancelled while the skill catalog loaded)" in out
    loaded = load_session_file(log)
    captured = [json.loads(line) for line in requests.read_text().splitlines()]
    assert [c["index"] for c in captured] == list(range(7))
    bodies = [c["body"] for c in captured]
    assert compare_with_captures(loaded.events, bodies) == []
    kinds = [(e["type"], e["data"].get("reason")) for e in header_events(loaded.events)]
    assert kinds == [
        ("request/header", "initial"),
        ("request/header-delta", None),
        ("request/header", "fallback"),
        ("request/header", "resume"),
    ]


@pytest.mark.spec("JSON-4", "JSONL-2")
def test_the_demo_log_is_deterministic_and_every_line_is_canonical_json(
    tmp_path, capsys
):
    _, first, first_requests = run_demo(tmp_path, "a")
    _, second, second_requests = run_demo(tmp_path, "b")
    capsys.readouterr()
    assert first.read_bytes() == second.read_bytes()
    for line in first.read_text(encoding="utf-8").splitlines():
        assert line == canonical_json(json.loads(line))
    assert first_requests.read_bytes() == second_requests.read_bytes()


@pytest.mark.spec("CACHE-1", "CACHE-3")
def test_the_demos_capture_alone_is_judged_conformant_with_its_resume(tmp_path, capsys):
    _, _, requests = run_demo(tmp_path, "a")
    capsys.readouterr()
    status = main(["check", "--requests", str(requests)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.splitlines()[-1] == "Verdict: CONFORMANT"
    assert "request 5 (main, resume of request 4): message-edited (expected:" in out
    lines = [json.loads(line) for line in requests.read_text().splitlines()]
    assert [line.get("process_start") for line in lines] == [None] * 5 + [
        "resume",
        None,
    ]
    assert sorted(i for i, line in enumerate(lines) if "expect_break" in line) == [
        2,
        4,
        5,
    ]
