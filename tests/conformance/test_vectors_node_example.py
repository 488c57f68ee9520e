"""The Node example codec adapter (examples/node-codec/) passes the core profile.

A second implementation in the repository, independent of the reference
and in another language: ``reqfold vectors`` runs it as a real child
process, exactly as a harness author's adapter would. Skipped when
``node`` is not installed, unless ``CI`` is set: CI must run it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.codec.cases import CORE
from reqfold.conformance.codec.loading import iter_cases
from reqfold.reference.revisions import Revision

ADAPTER = Path(__file__).resolve().parents[2] / "examples" / "node-codec" / "adapter.js"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed, and CI must run the Node example")
        pytest.skip("node is not installed: the Node example adapter cannot run")
    return found


def run_vectors(*args: str) -> tuple[int, dict[str, object]]:
    """``reqfold vectors`` (in this process) against the Node adapter (a child)."""
    impl = f"{node()} {ADAPTER}"
    status, out, err = reqfold_here(
        "vectors", "--impl", impl, "--format", "json", *args
    )
    assert "Traceback" not in err
    report: dict[str, object] = json.loads(out)
    return status, report


@pytest.mark.slow
def test_the_node_example_passes_the_core_profile_of_every_revision() -> None:
    code, report = run_vectors("--profile", "core")
    core = [(r, c) for r, c in iter_cases() if c.profile == CORE]
    assert report["counts"] == {
        "pass": len(core),
        "warn": 0,  # member order kept, integer-like keys included
        "fail": 0,
        "error": 0,
        "skip": 0,
    }
    assert code == 0
    results = report["results"]
    assert isinstance(results, list)
    passed = {r["revision"] for r in results if r["outcome"] == "pass"}
    assert passed == {revision.value for revision in Revision}


@pytest.mark.slow
def test_the_node_example_claims_only_core_and_its_strict_results_stay_apart() -> None:
    code, report = run_vectors()
    assert code == 0
    assert report["profiles"] == {"claimed": ["core"], "judged": ["core"]}
    strict = report["profileCounts"]
    assert isinstance(strict, dict)
    assert strict["strict"]["fail"] > 0
