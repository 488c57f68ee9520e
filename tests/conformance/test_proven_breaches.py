"""A breach the run has already proven stays a failure when the harness
hangs afterwards: the hang is the error beside it, not a reason for "no
verdict" (a contributor's ``contributor/started`` for a call that must not
happen is proof; a sentinel found is proof,
tests/conformance/test_harness_chaos.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

CHAOS = Path(__file__).parent / "chaos_harnesses"
SCENARIO = "prefix-composed-once@session-prefix"


@pytest.mark.slow
@pytest.mark.spec("PREFIX-1")
def test_a_harness_that_composes_again_and_then_hangs_still_fails() -> None:
    impl = shlex.join([sys.executable, str(CHAOS / "recomposes_then_hangs.py")])
    status, stdout, stderr = reqfold_here(
        *("run", "--impl", impl, "--only", "scenarios"),
        *("--revision", "session-prefix", "--timeout", "2"),
        *("--scenario", "prefix-composed-once"),
        limit=60,
    )
    assert status == 1, stdout + stderr
    assert "Verdict: NOT CONFORMANT" in stdout
    assert f"ERROR  scenarios  {SCENARIO}/run" in stdout
    assert f"FAIL   scenarios  {SCENARIO}/calls/rules@i1" in stdout
    assert "called 2 time(s)" in stdout
