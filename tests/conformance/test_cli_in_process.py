"""`reqfold_here` (tests/support/cli_in_process.py) fails a test where a
child ``reqfold`` would have failed it: stdout a process could not write,
a run that never ends."""

from __future__ import annotations

import sys
import threading
from typing import Any

import cli_in_process
import pytest


def test_stdout_that_is_not_utf8_fails_the_test_as_a_child_would_fail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def prints_a_lone_surrogate(argv: Any) -> int:
        sys.stdout.write("\ud800\n")
        return 0

    monkeypatch.setattr(cli_in_process, "main", prints_a_lone_surrogate)
    with pytest.raises(pytest.fail.Exception, match="could not write as UTF-8"):
        cli_in_process.reqfold_here("anything")


def test_a_run_that_never_ends_fails_the_test_after_its_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def never_ends(argv: Any) -> int:
        threading.Event().wait()
        return 0

    monkeypatch.setattr(cli_in_process, "main", never_ends)
    with pytest.raises(pytest.fail.Exception, match=r"did not end within 0\.2 s"):
        cli_in_process.reqfold_here("anything", limit=0.2)
