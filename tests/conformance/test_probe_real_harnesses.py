"""``reqfold probe`` driving real harnesses installed from npm, unmodified.

Skipped, and saying so, where the harness is not installed: CI must not
depend on one (``npm install -g @mariozechner/pi-coding-agent`` and
``npm install -g opencode-ai`` install them; docs/probe-field.md has the
commands and what they showed). No shim: the probe's own drivers and
config templates do all the work.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import reqfold_here
from probe_reports import checks_by_id, read_probe_report
from real_harnesses import needs

from reqfold.conformance.probe.perturb import faketime_library

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "probe"


def probe(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    argv = ["probe", "--timeout", "60", *args]
    status, out, err = reqfold_here(*argv, env={"PYTHONPATH": path, **env})
    return subprocess.CompletedProcess(argv, status, out, err)


def session_points(report: Path) -> list[dict[str, Any]]:
    """The requests of the probe's session in its JSON report's cache trace."""
    traces = read_probe_report(report)["scenarios"]
    (session,) = (trace for trace in traces if trace["scenario"] == "session")
    points: list[dict[str, Any]] = session["requests"]
    return points


def perturbed(report: Path, name: str) -> dict[str, Any]:
    """The perturbation's check ``perturb/NAME`` in the JSON report."""
    return checks_by_id(read_probe_report(report))[f"perturb/{name}"]


@needs("pi", "npm install -g @mariozechner/pi-coding-agent")
@pytest.mark.spec("CACHE-1", "CACHE-3", "CACHE-2")
def test_pi_in_rpc_mode_is_driven_by_json_lines_and_its_date_breaks_the_resume(
    tmp_path: Path,
) -> None:
    rpc = "pi --mode rpc --provider fake --model {model} --session-dir {workdir}/s"
    perturb = "next-day,compaction" if faketime_library() else "compaction"
    result = probe(
        "--drive",
        "jsonl",
        "--cmd",
        rpc,
        "--resume-cmd",
        rpc + " -c",
        "--send",
        '{"type": "prompt", "message": "{prompt}"}',
        "--turn-end",
        "type=agent_end",
        "--turn-end",
        "type=response,command=compact",
        "--config-template",
        f"{EXAMPLES / 'pi-models.json'}:{tmp_path / 'models.json'}",
        "--perturb",
        perturb,
        "--compact",
        '{"type": "compact"}',
        "--report-json",
        str(tmp_path / "probe.json"),
        PI_CODING_AGENT_DIR=str(tmp_path),
        PI_OFFLINE="1",
    )
    out = result.stdout
    assert "run 1: 2 of 2 turn(s) fed, 2 handled, 2 request(s)" in out, out
    report = tmp_path / "probe.json"
    second = session_points(report)[1]
    assert (second["instance"], second["stream"], second["relation"]) == (
        "run 1",
        "main",
        "append",
    )
    compaction = perturbed(report, "compaction")
    assert compaction["status"] == "pass", compaction
    assert "broke from the conversation" in compaction["message"]
    if faketime_library():
        next_day = perturbed(report, "next-day")
        assert next_day["status"] == "warn", next_day
        assert "Current date: " in next_day["message"]


@needs("opencode", "npm install -g opencode-ai")
@pytest.mark.spec("CACHE-2")
def test_opencode_runs_one_process_per_turn_from_its_project_config(
    tmp_path: Path,
) -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        "opencode run -m fake/{model} {prompt}",
        "--next-cmd",
        "opencode run -c -m fake/{model} {prompt}",
        "--config-template",
        f"{EXAMPLES / 'opencode.json'}:opencode.json",
        "--turns",
        str(EXAMPLES / "two-turns.txt"),
        "--perturb",
        "fresh-session",
        "--report-json",
        str(tmp_path / "probe.json"),
        OPENCODE_DISABLE_AUTOUPDATE="1",
    )
    out = result.stdout
    # the first process sends a title request before the main one
    assert "run 1: 1 of 1 turn(s) fed, 1 handled, 2 request(s)" in out, out
    # the title request is a side stream of its own, whichever came first
    points = session_points(tmp_path / "probe.json")
    streams = {(point["instance"], point["stream"]) for point in points}
    assert any(run == "run 1" and stream.startswith("side") for run, stream in streams)
    assert any(
        (point["instance"], point["stream"], point["relation"])
        == ("run 2", "main", "append")
        for point in points
    ), points
    fresh = perturbed(tmp_path / "probe.json", "fresh-session")
    assert fresh["status"] == "pass", fresh
