"""An implementation runs with the user's own PATH; a Python that cannot
import reqfold gets a hint naming the one that can."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reqfold.conformance.adapters.child_env import missing_reqfold_hint
from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.adapters.lifecycle import describe
from reqfold.conformance.errors import AdapterStartupFailed

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PATH = "/usr/bin:/bin"


def test_an_adapter_gets_the_users_path_unchanged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A harness's `python3` may need packages only the user's Python has:
    # reqfold puts nothing of its own in front of it.
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    connection = StdioConnection(["sh", "-c", 'echo "$PATH" >&2; exit 1'], timeout=10)
    with pytest.raises(AdapterStartupFailed):
        connection.initialize()
    assert connection.stderr_tail.strip().splitlines()[0] == SYSTEM_PATH


def _system_python_lacks_reqfold() -> bool:
    python3 = "/usr/bin/python3"
    if not os.path.exists(python3):
        return False
    done = subprocess.run(
        [python3, "-c", "import reqfold"],
        env={"PATH": SYSTEM_PATH},
        capture_output=True,
        check=False,
    )
    return done.returncode != 0


@pytest.mark.slow
def test_a_bad_harness_run_by_a_python_without_reqfold_names_the_one_to_use() -> None:
    reqfold = Path(sys.executable).parent / "reqfold"
    if not reqfold.exists():
        pytest.skip(f"no reqfold script beside {sys.executable}")
    if not _system_python_lacks_reqfold():
        pytest.skip("/usr/bin/python3 is absent or imports reqfold")
    harness = "tests/conformance/bad_harnesses/recomposes_every_turn.py"
    done = subprocess.run(
        [
            str(reqfold),
            *("run", "--impl", f"python3 {harness}", "--only", "scenarios"),
            *("--scenario", "plain-turns", "--revision", "session-prefix"),
        ],
        cwd=REPO,
        env={**os.environ, "PATH": SYSTEM_PATH, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 3, said[-2000:]
    hint = "hint: the implementation's Python cannot import reqfold: run it with"
    assert f"{hint} {sys.executable}" in said
    assert "Traceback (most recent call last)" not in done.stdout


def test_a_start_up_error_from_a_missing_reqfold_says_which_python_to_use() -> None:
    error = AdapterStartupFailed(
        "initialize failed",
        stderr_tail="ModuleNotFoundError: No module named 'reqfold'",
    )
    said = describe(error)
    assert f"run it with {sys.executable}" in said
    assert said.startswith("start-up failed: initialize failed; hint:")


def test_other_start_up_errors_get_no_hint() -> None:
    assert missing_reqfold_hint("ModuleNotFoundError: No module named 'numpy'") == ""
    said = describe(AdapterStartupFailed("x", stderr_tail="Traceback"))
    assert "hint" not in said
