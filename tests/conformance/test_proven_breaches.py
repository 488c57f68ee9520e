"""A breach the run has already proven stays a failure when the harness
hangs afterwards: the hang is the error beside it, not a reason for "no
verdict" (a contributor's ``contributor/started`` for a call that must not
happen is proof; a sentinel found is proof,
tests/conformance/test_harness_chaos.py)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

CHAOS = Path(__file__).parent / "chaos_harnesses"
SCENARIO = "prefix-composed-once@session-prefix"


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1")
def test_a_harness_that_composes_again_and_then_hangs_still_fails(
    tmp_path: Path,
) -> None:
    impl = shlex.join([sys.executable, str(CHAOS / "recomposes_then_hangs.py")])
    report = tmp_path / "run.json"
    status, stdout, stderr = reqfold_here(
        *("run", "--impl", impl, "--only", "scenarios"),
        *("--revision", "session-prefix", "--timeout", "2"),
        *("--scenario", "prefix-composed-once", "--report-json", str(report)),
        limit=60,
    )
    assert status == 1, stdout + stderr
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["verdict"]["text"].startswith("NOT CONFORMANT")
    statuses = {check["id"]: check for check in data["checks"]}
    assert statuses[f"{SCENARIO}/run"]["status"] == "error"
    composed_again = statuses[f"{SCENARIO}/calls/rules@i1"]
    assert composed_again["status"] == "fail"
    assert "called 2 time(s)" in composed_again["message"]
