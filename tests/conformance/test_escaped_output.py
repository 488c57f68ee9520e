"""Text an implementation controls never acts on the user's terminal.

A known-bad codec adapter (`bad_adapters/speaks_in_escapes.py`, a real
child process) puts sequences that set a terminal's title and clear its
screen in its name, version, language and internal-error message; a report
it leads to carries them into ``reqfold compare``. Every one is printed,
and written to the Markdown and HTML reports, as its escape.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.terminal_text import EscapingStream, printable

ROOT = Path(__file__).resolve().parents[2]
ESCAPES = shlex.join(
    [sys.executable, str(ROOT / "tests/conformance/bad_adapters/speaks_in_escapes.py")]
)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Any control character but newline and tab."""


def test_a_stream_escapes_control_characters_but_keeps_the_progress_clear() -> None:
    inner = io.StringIO()
    stream = EscapingStream(inner)  # type: ignore[arg-type]
    stream.write("name\x1b]0;pwned\x07 \x9b2J\tend\n")
    stream.write("\r\x1b[K[####] 100%")
    assert inner.getvalue() == (
        "name\\x1b]0;pwned\\x07 \\u009b2J\tend\n\r\x1b[K[####] 100%"
    )


def test_an_escaped_c1_control_in_json_text_is_still_json_of_the_same_string() -> None:
    text = json.dumps({"name": "a\x9bb\x85"}, ensure_ascii=False)
    assert json.loads(printable(text)) == {"name": "a\x9bb\x85"}


@pytest.mark.slow
def test_an_adapters_control_sequences_reach_no_terminal_and_no_markdown_report(
    tmp_path: Path,
) -> None:
    markdown, report = tmp_path / "run.md", tmp_path / "run.json"
    page, junit = tmp_path / "run.html", tmp_path / "junit.xml"
    status, out, err = reqfold_here(
        *("run", "--impl", ESCAPES, "--only", "vectors"),
        *("--revision", "session-prefix"),
        *("--report-md", str(markdown), "--report-json", str(report)),
        *("--report-html", str(page), "--junit", str(junit)),
    )
    assert status == 3, out + err
    summary = markdown.read_text(encoding="utf-8")
    for shown in (out, err, summary, page.read_text(), junit.read_text()):
        assert not CONTROL.search(shown)
    assert "escapes\\x1b]0;pwned\\x07 1.0\\x1b[2J (python\\u009b2J)" in out
    assert "bug in diff\\x1b]0;pwned\\x07\\x1b[2J\\u009b2J" in out
    assert "bug in diff\\x1b]0;pwned\\x07\\x1b[2J\\u009b2J" in summary

    # the report keeps what was sent; compare prints the ids it holds escaped
    old = json.loads(report.read_text(encoding="utf-8"))
    assert old["implementation"]["name"] == "escapes\x1b]0;pwned\x07"
    new = json.loads(report.read_text(encoding="utf-8"))
    for check in new["checks"]:
        check["id"] += "\x1b]0;pwned\x07\x1b[2J"
        check["status"] = "fail"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(new), encoding="utf-8")
    status, out, err = reqfold_here("compare", str(report), str(changed))
    assert status == 1, out + err
    assert not CONTROL.search(out + err)
    assert "\\x1b]0;pwned\\x07\\x1b[2J" in out


@pytest.mark.slow
def test_a_refused_steps_message_reaches_no_terminal_and_no_report_raw(
    tmp_path: Path,
) -> None:
    refuses = shlex.join(
        [
            sys.executable,
            str(ROOT / "tests/conformance/chaos_harnesses/refuses_in_escapes.py"),
        ]
    )
    markdown, page = tmp_path / "run.md", tmp_path / "run.html"
    status, out, err = reqfold_here(
        *("run", "--impl", refuses, "--only", "scenarios"),
        *("--scenario", "plain-turns", "--revision", "session-prefix"),
        *("--report-md", str(markdown), "--report-html", str(page)),
    )
    assert status == 3, out + err
    for shown in (out, err, markdown.read_text(), page.read_text()):
        assert not CONTROL.search(shown)
    assert "no\\x1b]0;pwned\\x07\\x1b[2J\\u009b2J" in out
