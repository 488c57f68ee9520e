"""Codex (`@openai/codex`, npm) runs against the fake's Responses dialect
unmodified: two processes (a turn, then `resume --last` with a tool call),
and the cache holds across them. Skipped where `codex` is not installed
(`npm install -g @openai/codex`); docs/codex.md says what it showed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reqfold.fakes import FakeProvider, Reply, ToolCall
from reqfold.fakes.server import running_server

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        shutil.which("codex") is None,
        reason="codex is not installed (npm install -g @openai/codex)",
    ),
]

TIMEOUT = 120


def codex(
    url: str, home: Path, work: Path, *words: str
) -> subprocess.CompletedProcess[str]:
    """One `codex exec` process pointed at the fake by its config overrides."""
    provider = (
        f'{{name="reqfold",base_url="{url}/v1",env_key="REQFOLD_KEY",'
        'wire_api="responses"}'
    )
    command = [
        "codex",
        "exec",
        "--skip-git-repo-check",
        "-c",
        "model_provider=reqfold",
        "-c",
        f"model_providers.reqfold={provider}",
        "-m",
        "gpt-5",
        *words,
    ]
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "CODEX_HOME": str(home),
        "REQFOLD_KEY": "sk-reqfold-test",
    }
    return subprocess.run(
        command,
        cwd=work,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def shell_call(tools: list[Any]) -> ToolCall:
    """A call of the shell tool this Codex version offers, reading README.md."""
    names = {tool.get("name") for tool in tools if isinstance(tool, dict)}
    if "exec_command" in names:
        return ToolCall.of("exec_command", {"cmd": "cat README.md"})
    if "shell" in names:
        return ToolCall.of("shell", {"command": ["cat", "README.md"]})
    pytest.fail(f"no shell tool among Codex's tools: {sorted(map(str, names))}")


def test_codex_runs_two_processes_and_a_tool_call_against_the_fake(
    tmp_path: Path,
) -> None:
    home, work = tmp_path / "codex-home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "README.md").write_text("hello from the readme\n", encoding="utf-8")
    fake = FakeProvider("openai-responses")
    fake.push(Reply(text="hi there"))
    with running_server(fake) as url:
        first = codex(url, home, work, "say hi")
        assert first.returncode == 0, first.stderr[-2000:]
        [opening] = fake.requests
        assert isinstance(opening.body, dict)
        fake.push(
            Reply(
                reasoning="read it first",
                tool_calls=(shell_call(opening.body["tools"]),),
            ),
            Reply(text="The README says hello."),
        )
        second = codex(url, home, work, "resume", "--last", "what does the README say?")
        assert second.returncode == 0, second.stderr[-2000:]
    assert "hi there" in first.stdout
    assert "The README says hello." in second.stdout
    requests = fake.requests
    assert [(r.path, r.status) for r in requests] == [("/v1/responses", 200)] * 3
    diagnostics = [r.diagnostic for r in requests]
    assert all(d is not None for d in diagnostics)
    # The resumed process extends the first one's request, and the tool
    # round trip extends that: nothing Codex re-sends breaks the prefix.
    assert [d["relation"] for d in diagnostics if d] == ["first", "append", "append"]
    assert all(d["cached_tokens"] > 0 for d in diagnostics[1:] if d)
    last = requests[2].body
    assert isinstance(last, dict)
    outputs = [
        item for item in last["input"] if item.get("type") == "function_call_output"
    ]
    [call] = [item for item in last["input"] if item.get("type") == "function_call"]
    assert [item["call_id"] for item in outputs] == [call["call_id"]]
    assert "hello from the readme" in json.dumps(outputs[0]["output"])
