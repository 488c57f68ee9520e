"""Shared test configuration: hypothesis profiles and spec-mark validation.

Every ``@pytest.mark.spec("RULE-ID", ...)`` must name rules that exist in
docs/spec.md; a misspelt ID is a usage error at collection, not a silent
gap in coverage. The IDs are also copied into ``user_properties`` so they
appear in JUnit XML.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile


def _share_compiled_bytecode() -> None:
    """Let this process and every child process reuse compiled bytecode.

    The tests start hundreds of Python child processes (adapters, harnesses,
    ``reqfold`` itself). Where PYTHONDONTWRITEBYTECODE is set (CI machines
    and this workplace set it), each of them compiled the whole project from
    source again: 0.45 s instead of 0.7 s for one ``reqfold run --help``.
    The session points itself and its children at one bytecode folder in
    the temporary directory instead (PYTHONPYCACHEPREFIX), removed at the
    end; the source tree stays as clean as the setting meant it to. A
    prefix the caller set, or bytecode writing left on, is left alone.
    """
    if os.environ.get("PYTHONPYCACHEPREFIX") or not sys.dont_write_bytecode:
        return
    prefix = tempfile.mkdtemp(prefix="reqfold-pycache-")
    atexit.register(shutil.rmtree, prefix, ignore_errors=True)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


_share_compiled_bytecode()

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from conformance.rules import load_rules  # noqa: E402

settings.register_profile("dev", max_examples=100)
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev")
)


def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> None:
    rules = load_rules()
    unknown: list[str] = []
    for item in items:
        for mark in item.iter_markers("spec"):
            for rule_id in mark.args:
                if rule_id not in rules:
                    unknown.append(f"{item.nodeid}: {rule_id}")
                item.user_properties.append(("spec", rule_id))
    if unknown:
        raise pytest.UsageError(
            "spec marks name rules missing from docs/spec.md:\n  "
            + "\n  ".join(unknown)
        )
