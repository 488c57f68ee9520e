"""An implementation's command finds the Python that runs reqfold first on PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reqfold.conformance.adapters.child_env import (
    missing_reqfold_hint,
    with_own_python_first,
)
from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.adapters.lifecycle import describe
from reqfold.conformance.errors import AdapterStartupFailed

REPO = Path(__file__).resolve().parents[2]
SYSTEM_PATH = "/usr/bin:/bin"


def test_the_folder_of_reqfolds_python_goes_first_on_the_path() -> None:
    env = with_own_python_first({"PATH": "/usr/bin:/bin"}, "/venv/bin/python3")
    assert env["PATH"] == "/venv/bin:/usr/bin:/bin"


def test_a_path_that_already_holds_the_folder_is_left_as_it_is() -> None:
    env = with_own_python_first({"PATH": "/usr/bin:/venv/bin"}, "/venv/bin/python3")
    assert env["PATH"] == "/usr/bin:/venv/bin"


def test_a_missing_path_becomes_the_folder_then_the_default_path() -> None:
    env = with_own_python_first({}, "/venv/bin/python3")
    assert env["PATH"] == os.pathsep.join(["/venv/bin", *os.defpath.split(os.pathsep)])


def test_python3_in_an_adapter_command_is_the_python_running_reqfold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    own = os.path.join(os.path.dirname(sys.executable), "python3")
    if not os.path.exists(own):
        pytest.skip(f"no python3 beside {sys.executable}")
    monkeypatch.setenv("PATH", SYSTEM_PATH)
    connection = StdioConnection(
        ["sh", "-c", 'command -v python3 >&2; exec python3 -c ""'], timeout=10
    )
    with pytest.raises(AdapterStartupFailed):
        connection.initialize()
    first = connection.stderr_tail.strip().splitlines()[0]
    assert first == own


@pytest.mark.slow
def test_a_bad_harness_runs_by_python3_with_only_the_system_path(
    tmp_path: Path,
) -> None:
    reqfold = Path(sys.executable).parent / "reqfold"
    if not reqfold.exists():
        pytest.skip(f"no reqfold script beside {sys.executable}")
    harness = "tests/conformance/bad_harnesses/recomposes_every_turn.py"
    done = subprocess.run(
        [
            str(reqfold),
            "run",
            "--impl",
            f"python3 {harness}",
            "--only",
            "scenarios",
            "--scenario",
            "plain-turns",  # one it passes: what counts is that it ran
            "--revision",
            "session-prefix",
        ],
        cwd=REPO,
        env={**os.environ, "PATH": SYSTEM_PATH, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Verdict: CONFORMANT" in done.stdout


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
