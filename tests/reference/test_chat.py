"""``python -m reqfold.reference.chat`` as a child process: bad input is one line on
stderr and exit 2, never a traceback (its sessions are driven under
``reqfold probe`` in tests/conformance/test_probe.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def chat(
    *args: str, base_url: str | None = "http://127.0.0.1:9"
) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_BASE_URL"}
    env["PYTHONPATH"] = str(ROOT)
    if base_url is not None:
        env["OPENAI_BASE_URL"] = base_url
    return subprocess.run(
        [sys.executable, "-m", "reqfold.reference.chat", *args],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "cannot read"),
        ('{"bad\n', "damaged line"),
        ('{"type":"session","version":0,"id":"s","createdAt":1,"revision":"x"}\n', ""),
    ],
)
def test_a_log_that_cannot_be_resumed_is_one_line_and_exit_two(
    tmp_path: Path, content: str | None, says: str
) -> None:
    log = tmp_path / "s.jsonl"
    if content is not None:
        log.write_text(content, encoding="utf-8")
    result = chat("--resume", str(log))
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("chat: cannot open the session log:")
    assert says in result.stderr
    assert "Traceback" not in result.stderr


def test_without_a_base_url_it_says_which_variable_to_set(tmp_path: Path) -> None:
    result = chat("--log-dir", str(tmp_path), base_url=None)
    assert result.returncode == 2
    assert "set OPENAI_BASE_URL" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_end_of_input_at_once_leaves_an_empty_session_and_exits_zero(
    tmp_path: Path,
) -> None:
    result = chat("--log-dir", str(tmp_path), "--no-declare")
    assert result.returncode == 0, result.stderr
    [log] = tmp_path.glob("*.jsonl")
    assert f"log {log}" in result.stderr
    storage = log.read_text(encoding="utf-8")
    assert storage.count("\n") == 1
    assert '"revision"' not in storage
