"""The harness-adapter skeletons (examples/harness-skeleton/) start, answer
``initialize`` and give a clear first failure: the method to write next.

A harness author copies one, runs ``reqfold run`` on it at once, and reads
which method the suite needs next (issue 29). Each runs as a real child
process. The Node one is skipped when ``node`` is not installed, unless
``CI`` is set: CI must run it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

pytestmark = pytest.mark.slow

FOLDER = Path(__file__).resolve().parents[2] / "examples" / "harness-skeleton"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("node is not installed, and CI must run the Node skeleton")
        pytest.skip("node is not installed: the Node skeleton cannot run")
    return found


def command(language: str) -> list[str]:
    if language == "python":
        return [sys.executable, str(FOLDER / "adapter.py")]
    return [node(), str(FOLDER / "adapter.js")]


LANGUAGES = ["python", "javascript"]


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_run_on_the_skeleton_names_the_first_method_to_write(language: str) -> None:
    impl = shlex.join(command(language))
    status, out, err = reqfold_here(
        "run", "--impl", impl, "--only", "scenarios", "--scenario", "plain-turns"
    )
    assert status == 3, out + err
    assert (
        f"reqfold run: my-harness 0.0.1 ({language}); revisions: session-prefix;"
        " capabilities: harness"
    ) in out
    problems = out.split("\nProblems (1)\n", 1)[1]
    assert problems.startswith("  ERROR  scenarios  plain-turns@session-prefix/run")
    assert "session/open is not implemented yet: create the session's log" in problems
    assert "docs/harness-guide.md" in problems
    assert out.rstrip().endswith(
        "Verdict: NO VERDICT: some checks could not be run (see the errors above)"
    )


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_skeleton_speaks_the_protocol_and_exits_on_shutdown(language: str) -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": 1},
        },
        "not json",
        {"jsonrpc": "2.0", "id": 2, "method": "instance/send", "params": {}},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
    ]
    given = "".join(
        (line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines
    )
    done = subprocess.run(
        command(language),
        input=given,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [answer.get("id") for answer in answers] == [1, None, 2, 3, 4]
    assert answers[0]["result"]["capabilities"] == ["harness"]
    assert answers[1]["error"]["code"] == -32700
    assert answers[2]["error"]["code"] == -32601
    assert "instance/send is not implemented yet" in answers[2]["error"]["message"]
    assert answers[3]["error"]["code"] == -32601
    assert answers[4] == {"jsonrpc": "2.0", "id": 4, "result": None}
