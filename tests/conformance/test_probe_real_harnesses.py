"""``reqfold probe`` driving real harnesses installed from npm, unmodified.

Skipped, and saying so, where the harness is not installed: CI must not
depend on one (``npm install -g @mariozechner/pi-coding-agent`` and
``npm install -g opencode-ai`` install them; docs/probe-field.md has the
commands and what they showed). No shim: the probe's own drivers and
config templates do all the work.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
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
        PI_CODING_AGENT_DIR=str(tmp_path),
        PI_OFFLINE="1",
    )
    out = result.stdout
    assert "run 1: 2 of 2 turn(s) fed, 2 handled, 2 request(s)" in out, out
    assert re.search(r"^\s+1  run 1\s+main .* append", out, re.M), out
    assert re.search(r"^  compaction: pass .*broke from the conversation", out, re.M)
    if faketime_library():
        assert re.search(r"^  next-day: warn .*Current date: ", out, re.M), out


@needs("opencode", "npm install -g opencode-ai")
@pytest.mark.spec("CACHE-2")
def test_opencode_runs_one_process_per_turn_from_its_project_config() -> None:
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
        OPENCODE_DISABLE_AUTOUPDATE="1",
    )
    out = result.stdout
    # the first process sends a title request before the main one
    assert "run 1: 1 of 1 turn(s) fed, 1 handled, 2 request(s)" in out, out
    # the title request is a side stream of its own, whichever came first
    assert re.search(r"^\s+\d+  run 1\s+side", out, re.M), out
    assert re.search(r"^\s+\d+  run 2\s+main .* append", out, re.M), out
    assert re.search(r"^  fresh-session: pass ", out, re.M), out
