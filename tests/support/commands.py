"""Running ``reqfold`` as a user does, in a child process: one spelling for every test.

`reqfold` runs ``python -m reqfold.conformance.cli`` (not the console script, which
an editable install may point at another checkout) with the test's own
interpreter and ``PYTHONPATH``, and hands back the exit status and both
outputs. Importable as ``commands`` (`pythonpath = ["tests/support"]` in
pyproject.toml).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest


def reqfold(
    *args: str,
    timeout: float = 300,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[int, str, str]:
    """``reqfold ARGS``: its exit status, stdout and stderr (text); a run
    longer than `timeout` seconds is killed and fails the test."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reqfold.conformance.cli", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as hung:
        pytest.fail(
            f"reqfold {' '.join(args)} did not end within {timeout}s: {hung.stdout!r}"
        )
    return done.returncode, done.stdout, done.stderr
