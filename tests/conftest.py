"""Shared test configuration: shared bytecode, hypothesis profiles, spec marks.

Every ``@pytest.mark.spec("RULE-ID", ...)`` must name rules that exist in
docs/spec.md; a misspelt ID is a usage error at collection, not a silent
gap in coverage. The IDs are also copied into ``user_properties`` so they
appear in JUnit XML.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
import tempfile
from pathlib import Path


def _share_compiled_bytecode() -> None:
    """Let this process and every child process reuse compiled bytecode.

    The tests start hundreds of Python child processes (adapters, harnesses,
    ``reqfold`` itself). Where PYTHONDONTWRITEBYTECODE is set (CI machines
    and this workplace set it), each of them compiled the whole project from
    source again: 0.45 s instead of 0.7 s for one ``reqfold run --help``.
    The session points itself and its children at a bytecode folder of the
    user's own in the temporary directory instead (PYTHONPYCACHEPREFIX;
    kept between runs like any cache, never in the source tree, which stays
    as clean as the setting meant it to). A folder someone else owns, or
    others may write to, is not used. A prefix the caller set, or bytecode
    writing left on, is left alone.
    """
    if os.environ.get("PYTHONPYCACHEPREFIX") or not sys.dont_write_bytecode:
        return
    folder = Path(tempfile.gettempdir()) / f"reqfold-pycache-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        status = folder.lstat()
    except OSError:
        return
    if (
        not stat.S_ISDIR(status.st_mode)
        or status.st_uid != os.getuid()
        or status.st_mode & 0o077
    ):
        return
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = str(folder)
    sys.dont_write_bytecode = False


_share_compiled_bytecode()

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

from reqfold.conformance.rules import load_rules  # noqa: E402

# No deadline in any profile: a per-example time limit fails on a loaded
# machine (seen with seven developers sharing two cores), which says nothing
# about the code; the benchmarks under benchmarks/ watch speed.
settings.register_profile("dev", max_examples=100, deadline=None)
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


@pytest.hookimpl(optionalhook=True)  # without xdist (`-o addopts= -p no:xdist`)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject.toml's default): two workers per core, one for
    ``-m "not slow"``.

    Many tests wait on child processes, servers and timeouts; with one worker
    per core the cores idle through those waits (on two cores the suite took
    150 s with two workers, 128 s with four, its CPU bound). A set
    PYTEST_XDIST_AUTO_NUM_WORKERS, or `-n logical`, is left to xdist.
    """
    if (
        config.option.numprocesses != "auto"
        or os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
        or not hasattr(os, "sched_getaffinity")
    ):
        return None
    cores = len(os.sched_getaffinity(0))
    if "not slow" in (config.option.markexpr or ""):
        # The developer's loop runs in process and waits on nothing: a second
        # worker per core would only start and collect again (2.3 s of CPU
        # each; docs/test-suite.md, issue 31).
        return cores
    return 2 * cores


def pytest_collection_finish(session: pytest.Session) -> None:
    """Move what collection made (every test module, the suite, what they
    import) out of the garbage collector's sight.

    It lives until the session ends, yet every older-generation collection
    walked it again: some 186,000 objects once every test is collected, in
    every worker, paid most by the property tests, which make garbage fast
    (their time in the collector fell by about a quarter; docs/test-suite.md).
    Frozen objects are still freed by reference counting; only cycles among
    them wait for the process to end.
    """
    gc.freeze()


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
