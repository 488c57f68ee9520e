"""Real harnesses (pi, opencode) driven through the cache perturbations.

Each is installed from npm, unmodified, and pointed at the fake served on
127.0.0.1: several turns on day 0, each a process of its own continuing
the session; the next day (libfaketime moves the harness's clock only, the
fake's logical clock stays); the workspace changed (a file added, a file
modified in the git repository it works in); a fresh session. Used by
`tests/conformance/test_cache_field.py` (which skips where a harness or
`faketime` is absent) and to write docs/cache.md's field results.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reqfold.conformance.cache import ProcessStart
from reqfold.fakes import FakeProvider, dump_capture_jsonl
from reqfold.fakes.server import running_server

NEXT_DAY = ["faketime", "-f", "+1d"]


@dataclass(frozen=True)
class Step:
    """One harness process: its prompt, kind and whether it runs tomorrow."""

    prompt: str
    kind: str = "resume"
    tomorrow: bool = False
    change_workspace: bool = False


def plan(turns: int) -> list[Step]:
    """`turns` same-day turns, then next day, workspace changed, fresh."""
    steps = [
        Step(
            f"Turn {n}: what should I look at next in this project?",
            kind="first" if n == 0 else "resume",
        )
        for n in range(turns)
    ]
    return [
        *steps,
        Step("Good morning: anything else to check?", tomorrow=True),
        Step("I changed main.py; what now?", tomorrow=True, change_workspace=True),
        Step("Start over: list the files.", kind="fresh", tomorrow=True),
    ]


Command = Callable[[Step, Path], list[str]]


def pi_command(home: Path) -> Command:
    """pi, one process per turn (`-p`, `-c` to continue)."""
    agent = home / "agent"
    agent.mkdir(exist_ok=True)

    def command(step: Step, url_file: Path) -> list[str]:
        models = {
            "providers": {
                "fake": {
                    "baseUrl": url_file.read_text(),
                    "api": "openai-completions",
                    "apiKey": "sk-fake",
                    "compat": {
                        "supportsDeveloperRole": False,
                        "supportsReasoningEffort": False,
                    },
                    "models": [{"id": "deepseek-chat", "reasoning": False}],
                }
            }
        }
        (agent / "models.json").write_text(json.dumps(models))
        resume = ["-c"] if step.kind == "resume" else []
        return [
            "pi",
            "--provider",
            "fake",
            "--model",
            "deepseek-chat",
            "--session-dir",
            str(home / "sessions"),
            *resume,
            "-p",
            step.prompt,
        ]

    return command


def opencode_command(home: Path) -> Command:
    """opencode, one process per turn (`run`, `run -c` to continue)."""

    def command(step: Step, url_file: Path) -> list[str]:
        config = {
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "fake",
                    "options": {"baseURL": url_file.read_text(), "apiKey": "sk-fake"},
                    "models": {"deepseek-chat": {"name": "deepseek-chat"}},
                }
            },
            "model": "fake/deepseek-chat",
        }
        (home / "project" / "opencode.json").write_text(json.dumps(config))
        resume = ["-c"] if step.kind == "resume" else []
        return ["opencode", "run", *resume, step.prompt]

    return command


HARNESSES = {"pi": pi_command, "opencode": opencode_command}


def available(name: str) -> str | None:
    """Why `name` cannot be driven here, or None when it can."""
    missing = [tool for tool in (name, "faketime", "git") if shutil.which(tool) is None]
    return f"not installed: {', '.join(missing)}" if missing else None


def drive(
    name: str, home: Path, turns: int = 4
) -> tuple[list[str], list[ProcessStart]]:
    """Run the plan with harness `name`; the capture lines and process starts."""
    project = home / "project"
    project.mkdir(parents=True)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    (project / "main.py").write_text("print('hi')\n")
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "."], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "init"], cwd=project, check=True)
    env = {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(home / "agent"),
        "PI_OFFLINE": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "PWD": str(project),  # opencode finds its project by $PWD, not getcwd()
    }
    command = HARNESSES[name](home)
    url_file = home / "url"
    provider = FakeProvider("deepseek", max_body_bytes=8_000_000)
    starts: list[ProcessStart] = []
    with running_server(provider) as url:
        url_file.write_text(url)
        for number, step in enumerate(plan(turns), start=1):
            if step.change_workspace:
                (project / "notes.txt").write_text("notes\n")
                with (project / "main.py").open("a") as file:
                    file.write("print('changed')\n")
            starts.append(
                ProcessStart(
                    first_index=len(provider.capture),
                    name=f"{number}:{step.kind}",
                    kind=step.kind,
                )
            )  # type: ignore[arg-type]
            prefix = NEXT_DAY if step.tomorrow else []
            subprocess.run(
                [*prefix, *command(step, url_file)],
                cwd=project,
                env=env,
                capture_output=True,
                timeout=180,
                check=True,
            )
    return dump_capture_jsonl(provider.capture).splitlines(), starts
