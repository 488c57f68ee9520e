"""What ``reqfold run`` and ``reqfold probe`` print last: the failing rules,
the problems, then the verdict, so the failure is on screen when the run
ends (issue 29); colour only on a terminal, never with ``NO_COLOR``.
"""

from __future__ import annotations

import fcntl
import io
import os
import pty
import shlex
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from terminal import reqfold_on_a_terminal, xterm_environment

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.summary import (
    colour_wanted,
    count_text,
    kept_lines,
    problem_lines,
    rule_lines,
    verdict_line,
)
from reqfold.conformance.verdict import BROKEN, CONFORMANT, Check, rule_table

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "conformance" / "bad_harnesses"
BAD_RUN = (
    *("--impl", shlex.join([sys.executable, str(BAD / "config_built_once.py")])),
    *("--only", "scenarios", "--scenario", "model-change-between-turns"),
    *("--revision", "session-prefix"),
)
"""A run that breaks REQ-6 on one request: the harness builds its config once."""
FAILING = "model-change-between-turns@session-prefix/request-1"
ESC = "\x1b["


def check(outcome: Outcome, rules: tuple[str, ...], name: str) -> Check:
    return Check(
        part="scenarios",
        id=name,
        revision="session-prefix",
        rules=rules,
        outcome=outcome,
        message=f"why {name}",
    )


CHECKS = [
    check(Outcome.PASS, ("HDR-1", "HDR-2"), "a/pass"),
    check(Outcome.FAIL, ("HDR-2",), "a/fail"),
    check(Outcome.WARN, ("HDR-5",), "a/warn"),
]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# ------------------------------------------------------------ the pure parts


def test_only_the_rules_with_a_problem_are_listed_and_each_is_marked() -> None:
    lines = rule_lines(rule_table(CHECKS), show_all=False)
    assert lines[0] == "Rules with a problem (1 more pass: --show all)"
    assert [line.split()[1] for line in lines[2:]] == ["HDR-2", "HDR-5"]
    assert all(line.startswith(">") for line in lines[2:])


def test_show_all_lists_the_rules_that_pass_too_unmarked() -> None:
    lines = rule_lines(rule_table(CHECKS), show_all=True)
    assert lines[0] == "Rules"
    assert lines[2].startswith("  HDR-1 ")
    assert lines[3].startswith("> HDR-2 ")


def test_a_run_where_every_rule_passes_says_so_in_one_line() -> None:
    assert rule_lines(rule_table(CHECKS[:1]), show_all=False) == [
        "Rules: all 2 pass (--show all lists them)"
    ]


def test_a_run_that_judged_no_rule_says_nothing_ran_not_that_all_pass() -> None:
    assert rule_lines([], show_all=False) == ["Rules: none judged (nothing ran)"]
    assert rule_lines([], show_all=True) == ["Rules: none judged (nothing ran)"]


def test_the_problems_are_every_check_that_failed_or_warned_with_its_message() -> None:
    lines = problem_lines(CHECKS)
    assert lines == [
        "Problems (2)",
        "  FAIL   scenarios  a/fail  [HDR-2]",
        "         why a/fail",
        "  WARN   scenarios  a/warn  [HDR-5]",
        "         why a/warn",
    ]
    assert problem_lines(CHECKS[:1]) == []


def test_colour_is_only_for_a_terminal_and_never_with_no_color() -> None:
    assert colour_wanted(Terminal(), {})
    assert not colour_wanted(io.StringIO(), {})
    assert not colour_wanted(Terminal(), {"NO_COLOR": "1"})
    assert not colour_wanted(Terminal(), {"TERM": "dumb"})
    assert colour_wanted(Terminal(), {"NO_COLOR": ""})  # empty is unset


def test_coloured_lines_paint_the_failure_red_and_a_pass_green() -> None:
    assert verdict_line(BROKEN, "NOT CONFORMANT", colour=True) == (
        "Verdict: \x1b[1;31mNOT CONFORMANT\x1b[0m"
    )
    assert "\x1b[1;32m" in verdict_line(CONFORMANT, "CONFORMANT", colour=True)
    assert verdict_line(BROKEN, "NOT CONFORMANT") == "Verdict: NOT CONFORMANT"
    assert "\x1b[1;31mFAIL " in problem_lines(CHECKS, colour=True)[1]
    assert rule_lines(rule_table(CHECKS), show_all=False, colour=True)[2].startswith(
        "\x1b[31m> HDR-2"
    )


def test_counts_agree_with_their_noun() -> None:
    assert count_text(1, "check") == "1 check"
    assert [count_text(n, "check") for n in (0, 2)] == ["0 checks", "2 checks"]


# ------------------------------------------------------------ reqfold run


@pytest.mark.slow
@pytest.mark.spec("REQ-6")
def test_a_failing_run_ends_with_its_failing_rule_and_problem_above_the_verdict() -> (
    None
):
    status, out, err = reqfold_here("run", *BAD_RUN)
    assert status == 1, out + err
    tail = out.rstrip("\n").split("\n\n")[-3:]
    rules, problems, verdict = tail
    assert rules.startswith("Rules with a problem (")
    assert "> REQ-6 " in rules
    assert "  HDR-1 " not in out  # passing rows only with --show all
    assert problems.startswith("Problems (1)\n")
    assert f"  FAIL   scenarios  {FAILING}  [REQ-6,WIRE-1]" in problems
    assert verdict.endswith("Verdict: NOT CONFORMANT: a MUST rule is broken")
    # the first problem of REQ-6 and of WIRE-1, then the problem itself, once
    assert out.count(FAILING) == 3
    assert ESC not in out  # not a terminal: no colour


@pytest.mark.slow
def test_show_all_prints_every_check_as_it_comes_and_every_rule() -> None:
    status, out, _ = reqfold_here("run", *BAD_RUN, "--show", "all")
    assert status == 1
    assert "  pass   scenarios  model-change-between-turns@session-prefix/" in out
    assert "\n  HDR-1 " in out
    assert out.index("Problems (1)") > out.index("\n  HDR-1 ")


def on_a_terminal(*args: str, **env: str) -> tuple[int, str]:
    """``reqfold run ARGS`` with stdout on a pseudo-terminal; what it showed."""
    return reqfold_on_a_terminal("run", *args, env=xterm_environment(**env))


@pytest.mark.slow
def test_on_a_terminal_the_failure_is_red_unless_no_color_is_set() -> None:
    status, shown = on_a_terminal(*BAD_RUN, "--quiet")
    assert status == 1
    assert "\x1b[1;31mFAIL \x1b[0m  scenarios  " + FAILING in shown
    assert "Verdict: \x1b[1;31mNOT CONFORMANT" in shown
    status, plain = on_a_terminal(*BAD_RUN, "--quiet", NO_COLOR="1")
    assert status == 1
    assert ESC not in plain
    assert "Verdict: NOT CONFORMANT" in plain


# ------------------------------------------------------------ what was kept


def test_the_kept_lines_name_the_folder_and_a_check_command_for_the_failing_log(
    tmp_path: Path,
) -> None:
    logs = [tmp_path / "a.session-prefix.jsonl", tmp_path / "b.session-prefix.jsonl"]
    lines = kept_lines(tmp_path, logs, logs[1])
    assert lines[0].startswith(f"kept in {tmp_path}: 2 session logs")
    assert lines[1] == (
        f"  reqfold check {logs[1]} --requests"
        f" {tmp_path / 'b.session-prefix.requests.jsonl'}"
    )
    assert "seen only by a run" in lines[2]
    assert kept_lines(tmp_path, [], None) == [
        f"kept in {tmp_path}: nothing (no scenario wrote a log)"
    ]


@pytest.mark.slow
def test_run_with_keep_says_where_it_kept_what_and_the_command_works(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    status, out, _ = reqfold_here("run", *BAD_RUN, "--keep", str(kept))
    assert status == 1
    assert f"kept in {kept}: 1 session log " in out
    [command] = [line for line in out.splitlines() if "reqfold check " in line]
    words = shlex.split(command.strip())
    assert Path(words[2]).is_file()
    assert Path(words[4]).is_file()
    # the log alone is fine: the failure is a request check only a run sees
    checked, said, _ = reqfold_here(*words[1:])
    assert checked == 0, said


@pytest.mark.slow
def test_probe_says_its_log_is_deleted_at_the_end_unless_kept(tmp_path: Path) -> None:
    chat = shlex.join([sys.executable, "-m", "reqfold.reference.chat"])
    base = ("probe", "--cmd", f"{chat} --log-dir {{log_dir}}")
    base += ("--base-url-env", "OPENAI_BASE_URL")
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    status, out, err = reqfold_here(*base, env={"PYTHONPATH": path})
    assert status == 0, out + err
    assert "(in a temporary folder deleted when the probe ends: --keep DIR" in out
    status, out, _ = reqfold_here(
        *base, "--keep", str(tmp_path), env={"PYTHONPATH": path}
    )
    assert status == 0
    assert "temporary folder" not in out
    assert "kept: the log as " in out
    assert f"and the captured requests as requests.jsonl in {tmp_path}" in out


# ------------------------------------------------------------ the progress bar


@pytest.mark.slow
def test_on_a_narrow_terminal_each_progress_line_fits_and_says_its_part() -> None:
    primary, secondary = pty.openpty()
    fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 56, 0, 0))
    adapter = shlex.join([sys.executable, "-m", "reqfold.reference.adapter"])
    try:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "reqfold.conformance.cli",
                "run",
                "--impl",
                adapter,
                "--revision",
                "session-prefix",
                "--examples",
                "2",
            ],
            stdout=subprocess.DEVNULL,
            stderr=secondary,
            cwd=ROOT,
        )
        os.close(secondary)
        shown = bytearray()
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait(timeout=120) == 0
    finally:
        os.close(primary)
    drawn = [
        line for line in shown.decode("utf-8", "replace").split("\r\x1b[K") if line
    ]
    assert drawn
    # never the full width (a line that wraps cannot be erased and stays
    # behind); the longest are cut there, the part's number still showing
    assert max(len(line) for line in drawn) == 55
    assert any("vectors" in line and "(part 1" in line for line in drawn)
    assert any("properties" in line and "(part 2" in line for line in drawn)


def test_the_suites_colours_pass_the_escaping_stream_and_nothing_else_does() -> None:
    from reqfold.conformance.summary import paint
    from reqfold.conformance.terminal_text import EscapingStream

    inner = io.StringIO()
    stream = EscapingStream(inner)
    stream.write(paint("FAIL", "1;31", True) + " \x1b]0;title\x07\x1b[2J")
    assert inner.getvalue() == "\x1b[1;31mFAIL\x1b[0m \\x1b]0;title\\x07\\x1b[2J"
    with pytest.raises(ValueError, match="not one of the suite's colours"):
        paint("x", "2J", True)


# ------------------------------------------------------------ reqfold vectors


@pytest.mark.slow
@pytest.mark.spec("TOOLS-3")
def test_vectors_end_with_the_problems_right_above_the_verdict() -> None:
    impl = shlex.join(
        [
            sys.executable,
            str(ROOT / "tests/conformance/bad_adapters/drops_tool_removals.py"),
        ]
    )
    status, out, err = reqfold_here(
        "vectors", "--impl", impl, "--revision", "session-prefix"
    )
    assert status == 1, out + err
    problems, verdict = out.rstrip("\n").split("\n\n")[-2:]
    assert problems.startswith("Problems (")
    assert "  FAIL   session-prefix/" in problems
    assert verdict == "Verdict: NOT CONFORMANT: a MUST rule is broken"
    # nothing is listed before the summary: the problems are printed once
    before = out.split("\nImplementation: ", 1)[0]
    assert "FAIL" not in before
