"""A scripted reply delay longer than the fake's graceful stop (2 s), and a
cancel that lands while such a reply is in flight (issue 28, item 5).

The scenarios are written here, from ``cancel-mid-request``: the first
reply waits at a gate, a reaction opens it and cancels at once, so the
cancel lands while the reply sits in its delay; the next send must get
its own reply, and the run must end without a traceback. The reference
harness runs as a child process, the fake serves over HTTP.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.harness.runner import run_scenarios
from reqfold.conformance.harness.scenarios import SCENARIOS_DIR, load_scenario
from reqfold.conformance.outcomes import Outcome
from reqfold.fakes import FakeProvider
from reqfold.reference.revisions import Revision

REFERENCE = [sys.executable, "-P", "-m", "reqfold.reference.harness_adapter"]
DELAY = 3.0  # longer than the fake's graceful stop of 2 s


def delayed_cancel_scenario(folder: Path) -> Path:
    """cancel-mid-request, its first reply delayed past the graceful stop."""
    raw: dict[str, Any] = json.loads(
        (SCENARIOS_DIR / "cancel-mid-request.json").read_text(encoding="utf-8")
    )
    raw["id"] = "cancel-during-a-delayed-reply"
    raw["replies"] = [
        {
            "text": "LATE-REPLY-9d2f arrives after the cancel.",
            "hold": "slow-1",
            "delay": DELAY,
        },
        {"text": "NEXT-REPLY-41ab answers the next send."},
    ]
    send = raw["steps"][1]
    send["during"] = [
        {
            "when": {"held": "slow-1"},
            "then": [{"open": "slow-1"}, {"cancel": "user pressed escape"}],
        }
    ]
    path = folder / "cancel-during-a-delayed-reply.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


@pytest.mark.slow
@pytest.mark.spec("TURN-2", "REQ-1")
def test_a_cancel_in_a_delayed_reply_leaves_the_next_send_its_reply_and_no_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    scenario = load_scenario(delayed_cancel_scenario(tmp_path))
    fake = FakeProvider("deepseek")
    with caplog.at_level(logging.WARNING):
        report = run_scenarios(
            lambda: StdioConnection(REFERENCE, timeout=20),
            scenarios=[scenario],
            revisions=[Revision.SESSION_PREFIX],
            workdir=tmp_path,
            provider=fake,
        )
    problems = [
        f"{r.id}: {r.message}" for r in report.results if r.outcome is not Outcome.PASS
    ]
    assert report.results
    assert problems == []
    requests = fake.requests
    assert len(requests) == 2
    # the next send's request holds its own prompt and the cancelled turn's
    # prompt, never the late reply, which the harness never received
    second = json.dumps(requests[1].body)
    assert "Are you there?" in second
    assert "LATE-REPLY-9d2f" not in second
    assert requests[1].reply is not None
    assert "NEXT-REPLY-41ab" in json.dumps(requests[1].reply)
    said = caplog.text + capfd.readouterr().err
    assert "Traceback" not in said
    assert "Exception in ASGI" not in said
    assert "Cancel" not in said  # no task cut short by the graceful stop
