"""Tests that drive a real harness from npm: run where it is installed, skip where not.

CI never depends on one: under ``CI`` they skip unless
``REQFOLD_REAL_HARNESSES=1`` asks for them, since a harness a developer
installed by hand may be on the machine CI borrows, at a version no one
chose. Either way the skip says why.
"""

from __future__ import annotations

import os
import shutil

import pytest


def needs(command: str, install: str) -> pytest.MarkDecorator:
    """Skip unless `command` is on PATH (under CI: and real harnesses are asked for)."""
    if shutil.which(command) is None:
        return pytest.mark.skip(reason=f"{command} is not installed ({install})")
    if os.environ.get("CI") and os.environ.get("REQFOLD_REAL_HARNESSES") != "1":
        return pytest.mark.skip(
            reason=f"{command} is installed, but CI runs no real harness"
            " (REQFOLD_REAL_HARNESSES=1 asks for them)"
        )
    return pytest.mark.skipif(False, reason="")
