"""``reqfold probe --dialect`` over every dialect the fake serves.

The harnesses (``dialect_probe_harnesses/``) are the reference chat with a
client that speaks Anthropic messages or the OpenAI Responses API and opts
in to the provider's own cache diagnostics; they run as real child
processes against the probe's fake on 127.0.0.1. ``reqfold probe`` runs in
the test's process (`cli_in_process`).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from probe_reports import checks_by_id, read_probe_report

from reqfold.conformance.probe.cli import DIALECTS
from reqfold.fakes import PROFILES

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HARNESSES = Path(__file__).parent / "dialect_probe_harnesses"
PYTHON = shlex.quote(sys.executable)


def probe(dialect: str, harness: str, *more: str) -> subprocess.CompletedProcess[str]:
    """``reqfold probe --dialect DIALECT`` of a harness, resumed once."""
    command = f"{PYTHON} {shlex.quote(str(HARNESSES / harness))}"
    argv = [
        "probe",
        "--dialect",
        dialect,
        "--base-url-env",
        "OPENAI_BASE_URL",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--cmd",
        f"{command} --log-dir {{log_dir}}",
        "--resume-cmd",
        f"{command} --resume {{log_path}}",
        *("--show", "all"),  # the skipped check's row too
        *more,
    ]
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    status, out, err = reqfold_here(*argv, env={"PYTHONPATH": path})
    return subprocess.CompletedProcess(argv, status, out, err)


def test_the_probe_offers_every_dialect_the_fake_serves() -> None:
    assert set(DIALECTS) == set(PROFILES)
    assert {"anthropic", "openai-responses"} <= set(DIALECTS)


@pytest.mark.spec("CACHE-1", "CACHE-3", "CHECK-3")
@pytest.mark.parametrize(
    ("dialect", "harness", "said"),
    [
        ("anthropic", "anthropic_chat.py", "the provider said: no cache miss"),
        ("openai-responses", "responses_chat.py", "the provider said: cache_hit"),
    ],
)
def test_a_faithful_harness_in_another_dialect_passes_and_the_provider_agrees(
    dialect: str, harness: str, said: str, tmp_path: Path
) -> None:
    report = tmp_path / "r.json"
    result = probe(dialect, harness, "--report-json", str(report))
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert f"fake provider: {dialect} on" in out
    assert "run 2: 1 of 1 turn(s) fed, 1 handled, 1 request(s)" in out
    assert "extends #0; " + said in out
    assert "cache broke" not in out
    # The log rebuilds chat-completions requests: not compared, and said.
    data = read_probe_report(report)
    skipped = checks_by_id(data)["requests-not-compared"]
    assert skipped["status"] == "skip"
    assert skipped["rules"][0] == "REQ-1"
    assert f"the requests went out in the {dialect} dialect" in skipped["reason"]
    assert "note: requests-not-compared [REQ-1," in out  # a skip is never silent
    assert data["verdict"]["exitStatus"] == 0
    assert data["verdict"]["text"].startswith("CONFORMANT")


@pytest.mark.spec("CACHE-1")
def test_the_timeline_shows_the_providers_reason_beside_where_the_cache_broke() -> None:
    result = probe("anthropic", "anthropic_clock_chat.py")
    out = result.stdout
    broke = [line for line in out.splitlines() if "cache broke" in line]
    assert len(broke) == 2  # the second turn, and the resumed process's turn
    assert "differs from #0 at system.text, character" in broke[0]
    assert " ns.\\nYou are the reqfold chat" in broke[0]
    assert "the provider said: system_changed, " in broke[0]
    assert "tokens missed" in broke[0]
    # The resumed process named no earlier message: the fake says why the
    # cache broke, the provider has nothing to compare with.
    assert "the provider said" not in broke[1]
