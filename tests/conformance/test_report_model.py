"""The sans-IO parts of the reports: statuses, paths, expected failures, renderers.

In process and fast; the real runs are in test_report_run.py,
test_report_html.py and test_compare_cli.py.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
import xml.etree.ElementTree as ET

import pytest

from reqfold.conformance.codec.loading import load_cases
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.report.compare import compare_reports
from reqfold.conformance.report.expected import (
    ExpectedFailuresError,
    parse_expected,
    unknown_ids,
    unseen_ids,
)
from reqfold.conformance.report.html import render_html
from reqfold.conformance.report.json_report import render_json, schema_problems
from reqfold.conformance.report.junit import render_junit
from reqfold.conformance.report.markdown import render_markdown
from reqfold.conformance.report.model import Reproduction, RunReport, build_report
from reqfold.conformance.report.reproduction import first_difference
from reqfold.conformance.report.suite import digest_files
from reqfold.conformance.run.progress import Progress, progress_line
from reqfold.conformance.run.recording import LIMIT, Recorder
from reqfold.conformance.verdict import (
    BROKEN,
    CONFORMANT,
    Check,
    exit_status,
    status_of,
    verdict_text,
)


def check(
    outcome: Outcome, check_id: str = "session-prefix/case", message: str = ""
) -> Check:
    return Check(
        part="vectors",
        id=check_id,
        revision="session-prefix",
        rules=("HDR-1",),
        outcome=outcome,
        message=message,
        level="MUST",
    )


# ------------------------------------------------------------ statuses


def test_an_expected_failure_that_fails_is_xfail_and_breaks_nothing() -> None:
    checks = [check(Outcome.PASS, "a"), check(Outcome.FAIL, "b")]
    expected = {"b": "known"}
    assert status_of(checks[1], expected) == "xfail"
    assert exit_status(checks) == BROKEN
    assert exit_status(checks, expected=expected) == CONFORMANT


def test_an_expected_failure_that_passes_is_stale_and_fails_the_run() -> None:
    checks = [check(Outcome.PASS, "a")]
    expected = {"a": "was broken"}
    assert status_of(checks[0], expected) == "xpass"
    assert exit_status(checks, expected=expected) == BROKEN
    assert verdict_text(BROKEN, checks, expected).startswith("STALE EXPECTED FAILURE")


def test_an_expected_failure_that_errors_or_skips_keeps_its_outcome() -> None:
    expected = {"a": "known"}
    assert status_of(check(Outcome.ERROR, "a"), expected) == "error"
    assert status_of(check(Outcome.SKIP, "a"), expected) == "skip"


# ------------------------------------------------------------ first differences


@pytest.mark.parametrize(
    ("expected", "found", "path"),
    [
        ({"a": [1, 2]}, {"a": [1, 2]}, None),
        ({"a": 1}, {"a": 1.0}, None),
        ({"a": 1}, {"a": True}, "$.a"),
        ({"a": {"b": "x"}}, {"a": {"b": "y"}}, "$.a.b"),
        ({"a": 1, "b": 2}, {"a": 1}, "$.b"),
        ({"a": 1}, {"a": 1, "c": 3}, "$.c"),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, "$"),
        ([1, 2], [1, 2, 3], "$[2]"),
        (
            {"odd key": [0, {"x": None}]},
            {"odd key": [0, {"x": 0}]},
            "$['odd key'][1].x",
        ),
        ({"result": {}}, {"error": {}}, "$.result"),
    ],
)
def test_the_first_difference_is_the_path_of_the_first_differing_value(
    expected: object, found: object, path: str | None
) -> None:
    assert first_difference(expected, found) == path


# ------------------------------------------------------------ expected failures


def test_expected_failures_are_read_as_id_and_reason() -> None:
    text = '{"session-prefix/x": {"reason": "  issue 4  "}}'
    assert parse_expected(text) == {"session-prefix/x": "issue 4"}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "[]",
        '{"a": "x"}',
        '{"a": {}}',
        '{"a": {"reason": 3}}',
        '{"a": {"reason": "x"}, "a": {"reason": "y"}}',  # the last would win
        '{"a": {"reason": NaN}}',
    ],
)
def test_an_unusable_expected_failures_file_is_refused(text: str) -> None:
    with pytest.raises(ExpectedFailuresError):
        parse_expected(text)


def test_ids_must_name_a_vector_property_or_scenario_check_of_the_suite() -> None:
    case = load_cases()[0]
    scenario = load_scenarios()[0]
    revision = scenario.revisions[0].value
    good = [
        f"{case.revisions[0].value}/{case.id}",
        f"property/diff/{revision}",
        f"{scenario.id}@{revision}/log/REQ-1",
    ]
    bad = [
        f"no-such-revision/{case.id}",
        f"{case.revisions[0].value}/no-such-case",
        f"{scenario.id}@{revision}",
        f"{scenario.id}@no-such-revision/log/REQ-1",
        "property/nothing/session-prefix",
    ]
    assert unknown_ids(good + bad, load_cases(), load_scenarios()) == bad


def test_entries_outside_what_ran_are_not_called_unseen() -> None:
    expected = {
        "plain-turns@session-prefix/cache/request-9": "typo",
        "other@session-prefix/log/REQ-1": "not played",
        "property/diff/session-prefix": "not run",
        "header-events/case": "revision not judged",
        "session-prefix/gone": "no such check",
    }
    unseen = unseen_ids(
        expected,
        seen=["plain-turns@session-prefix/log/REQ-1"],
        played=["plain-turns@session-prefix"],
        ran_parts=["vectors", "scenarios"],
        revisions=["session-prefix"],
    )
    assert unseen == [
        "plain-turns@session-prefix/cache/request-9",
        "session-prefix/gone",
    ]


def test_entries_of_a_run_the_implementation_broke_are_not_called_unseen() -> None:
    expected = {"plain-turns@session-prefix/anchor/i1": "known", "x@y/z": "other"}
    unseen = unseen_ids(
        expected,
        seen=["plain-turns@session-prefix/run", "x@y/run-order"],
        played=["plain-turns@session-prefix", "x@y"],
        ran_parts=["scenarios"],
        revisions=["session-prefix"],
    )
    assert unseen == ["x@y/z"]  # a check merely named like the error is no error


# ------------------------------------------------------------ the progress bar


def test_the_progress_line_shows_the_fraction_the_part_and_the_problems() -> None:
    assert progress_line("vectors", 0, 4, 0).startswith("[" + "." * 24 + "]   0%")
    half = progress_line("vectors", 2, 4, 1)
    assert half == "[" + "#" * 12 + "." * 12 + "]  50%  vectors 2/4  1 problem"
    assert "100%" in progress_line("scenarios", 5, 4, 2)
    assert "0%" in progress_line("properties", 0, 0, 0)


def test_the_progress_line_says_which_part_of_how_many_and_fits_the_terminal() -> None:
    line = progress_line("properties", 2, 4, 0, step=(2, 3))
    assert line.endswith("properties 2/4 (part 2 of 3)")
    assert "(part" not in progress_line("vectors", 2, 4, 0, step=(1, 1))
    narrow = progress_line("properties", 2, 4, 3, step=(2, 3), columns=40)
    assert len(narrow) == 39  # never the full width: a wrapped line stays behind
    assert progress_line("vectors", 1, 2, 0, columns=200).endswith("vectors 1/2")


def test_a_disabled_progress_bar_writes_nothing() -> None:
    stream = io.StringIO()
    progress = Progress(stream, enabled=False)
    progress.start("vectors", 3)
    progress.advance(problem=True)
    progress.clear()
    assert stream.getvalue() == ""


def test_an_enabled_progress_bar_draws_and_clears_itself() -> None:
    stream = io.StringIO()
    progress = Progress(stream, enabled=True)
    progress.start("vectors", 1)
    progress.advance()
    progress.clear()
    text = stream.getvalue()
    assert "] 100%  vectors 1/1" in text
    assert text.endswith("\r\x1b[K")


# ------------------------------------------------------------ recording answers


class Answers:
    def initialize(self) -> dict[str, object]:
        return {}

    def request(self, method: str, params: dict[str, object]) -> dict[str, object]:
        return {"result": {"method": method, "n": params["n"]}}

    def close(self) -> None:
        pass


def test_the_recorder_keeps_the_latest_answers_by_method_and_params() -> None:
    recorder = Recorder()
    connection = recorder.wrap(Answers)()
    for n in range(LIMIT + 1):
        connection.request("codec/diff", {"n": n})
    assert recorder.answer("codec/diff", {"n": LIMIT}) == {
        "result": {"method": "codec/diff", "n": LIMIT}
    }
    assert recorder.answer("codec/diff", {"n": 0}) is None  # the oldest went
    assert recorder.answer("codec/apply", {"n": LIMIT}) is None


# ------------------------------------------------------------ renderers


def report(*checks: Check, expected: dict[str, str] | None = None) -> RunReport:
    expected = expected or {}
    status = exit_status(checks, expected=expected)
    return build_report(
        suite={
            "version": "0",
            "digest": digest_files([]),
            "vectorFiles": 0,
            "scenarioFiles": 0,
        },
        implementation={"name": "impl <b>", "version": "1"},
        command="impl",
        options={
            "revisions": None,
            "parts": ["vectors"],
            "scenarios": None,
            "strict": False,
        },
        checks=list(checks),
        reproductions={
            c.id: Reproduction(kind="vector", command="reqfold run", subject={})
            for c in checks
        },
        traces=[],
        notes=["properties not run: a note"],
        startup_error=None,
        expected=expected,
        exit_status=status,
        verdict=verdict_text(status, checks, expected),
        duration=1.5,
    )


def test_a_report_built_in_process_validates_against_the_schema() -> None:
    built = report(
        check(Outcome.PASS, "a"),
        check(Outcome.FAIL, "b", "wrong"),
        check(Outcome.SKIP, "c", "not declared"),
        check(Outcome.FAIL, "d", "known"),
        expected={"d": "issue 1"},
    )
    data = json.loads(render_json(built))
    assert schema_problems(data) == []
    assert data["counts"] == {
        "pass": 1,
        "warn": 0,
        "fail": 1,
        "error": 0,
        "skip": 1,
        "xfail": 1,
        "xpass": 0,
    }
    statuses = {item["id"]: item["status"] for item in data["checks"]}
    assert statuses == {"a": "pass", "b": "fail", "c": "skip", "d": "xfail"}
    assert data["checks"][0]["reproduction"] is None  # a pass needs none
    assert data["checks"][1]["reproduction"]["command"] == "reqfold run"


def test_the_schema_refuses_a_skip_without_its_reason() -> None:
    data = json.loads(render_json(report(check(Outcome.SKIP, "c", "why"))))
    data["checks"][0]["reason"] = ""
    assert schema_problems(data)


def test_text_a_check_carries_is_escaped_in_every_format() -> None:
    nasty = 'a|b <script>alert(1)</script> \x00 "q" ```'
    built = report(check(Outcome.FAIL, "x|<y>", nasty))
    ET.fromstring(render_junit(built))  # still well-formed XML
    html = render_html(built)
    assert "<script>" not in html
    assert "impl &lt;b&gt;" in html
    markdown = render_markdown(built)
    assert "```text\na|b <script>" in markdown
    assert "'''" in markdown  # a fence inside a message cannot close the block
    assert "impl &lt;b&gt;" in markdown  # outside code blocks, no markup


def test_what_an_adapter_said_outside_code_blocks_is_no_markdown_markup() -> None:
    built = dataclasses.replace(
        report(check(Outcome.PASS, "a")),
        startup_error='<img src=x onerror="alert(1)"> died',
        notes=["<script>alert(2)</script> a note"],
    )
    markdown = render_markdown(built)
    assert "<img" not in markdown
    assert "<script>" not in markdown
    assert "&lt;img src=x" in markdown
    assert "&lt;script&gt;alert(2)" in markdown


def test_the_markdown_and_html_show_no_duration() -> None:
    built = report(check(Outcome.PASS, "a"))
    assert "1.5" not in render_markdown(built)
    assert "1.5" not in render_html(built)


# ------------------------------------------------------------ compare


def minimal(statuses: dict[str, str], ratio: float | None = 0.5) -> dict[str, object]:
    """The members compare reads; a check ``s@r/...`` is of the scenario run
    ``s@r`` (its scenario and revision, as every report says them)."""
    return {
        "suite": {"digest": "sha256:1"},
        "checks": [
            {
                "id": check_id,
                "status": status,
                "rules": ["HDR-1"],
                "scenario": "s" if check_id.startswith("s@r/") else None,
                "revision": "r",
            }
            for check_id, status in statuses.items()
        ],
        "scenarios": [{"scenario": "s", "revision": "r", "hitRatio": ratio}],
        "verdict": {"exitStatus": 1 if "fail" in statuses.values() else 0},
    }


@pytest.mark.parametrize(
    ("old", "new", "failing", "passing"),
    [
        ({"a": "pass"}, {"a": "fail"}, ["a"], []),
        ({"a": "pass"}, {"a": "error"}, ["a"], []),
        ({"a": "fail"}, {"a": "xfail"}, [], []),
        ({"a": "xfail"}, {"a": "xpass"}, ["a"], []),
        ({}, {"a": "fail"}, ["a"], []),
        ({"a": "pass"}, {"a": "warn"}, [], []),
        ({"a": "warn"}, {"a": "pass"}, [], ["a"]),
        ({"a": "fail"}, {"a": "fail"}, [], []),
    ],
)
def test_compare_finds_what_newly_fails_and_what_newly_passes(
    old: dict[str, str], new: dict[str, str], failing: list[str], passing: list[str]
) -> None:
    comparison = compare_reports(minimal(old), minimal(new))
    assert [c.id for c in comparison.newly_failing] == failing
    assert [c.id for c in comparison.newly_passing] == passing
    assert comparison.regression == bool(failing)


def test_a_lower_cache_hit_ratio_is_a_regression() -> None:
    comparison = compare_reports(minimal({}, 0.6), minimal({}, 0.4))
    assert comparison.cache[0].lower
    assert comparison.regression
    assert not compare_reports(minimal({}, 0.4), minimal({}, 0.6)).regression
    assert not compare_reports(minimal({}, None), minimal({}, 0.1)).regression


def probe_shaped(
    statuses: dict[str, str], prompts: list[int], *, parts: str = "probe"
) -> dict[str, object]:
    """A probe's report as compare reads it: ids with no ``scenario@revision/``
    prefix, the session named by each check's ``scenario`` and ``revision``,
    and its trace's requests of `prompts` tokens."""
    return {
        "suite": {"digest": "sha256:1"},
        "options": {"parts": [parts]},
        "checks": [
            {
                "id": check_id,
                "part": parts,
                "status": status,
                "rules": ["CACHE-1"],
                "scenario": "session",
                "revision": "session-prefix",
            }
            for check_id, status in statuses.items()
        ],
        "scenarios": [
            {
                "scenario": "session",
                "revision": "session-prefix",
                "hitRatio": 0.5,
                "requests": [
                    {"promptTokens": tokens, "relation": "append", "check": None}
                    for tokens in prompts
                ],
            }
        ],
        "verdict": {"exitStatus": 1 if "fail" in statuses.values() else 0},
    }


def test_a_probe_that_no_longer_sends_a_request_is_no_regression() -> None:
    # fails before the fix: the probe's checks were never of a scenario run
    old = probe_shaped(
        {"log/REQ-1": "pass", "cache/request-1": "pass", "cache/request-2": "pass"},
        [100, 200, 300],
    )
    fewer = probe_shaped({"log/REQ-1": "pass", "cache/request-1": "pass"}, [100, 200])
    comparison = compare_reports(old, fewer)
    assert [change.id for change in comparison.unsent] == ["cache/request-2"]
    assert comparison.vanished == []
    assert not comparison.regression


def test_a_probe_s_failing_checks_gone_with_the_fix_are_no_regression() -> None:
    broken = probe_shaped(
        {"log/REQ-1": "fail", "log/TURN-1": "error", "log/LOG-1": "pass"}, [100]
    )
    fixed = probe_shaped({"log/LOG-1": "pass"}, [100])
    comparison = compare_reports(broken, fixed)
    assert [change.id for change in comparison.cleared] == ["log/REQ-1", "log/TURN-1"]
    assert comparison.vanished == []
    assert not comparison.regression


def test_a_probe_s_check_gone_while_its_requests_are_the_same_is_still_missing() -> (
    None
):
    old = probe_shaped({"log/REQ-1": "pass", "cache/request-1": "pass"}, [100, 200])
    new = probe_shaped({"log/REQ-1": "pass"}, [100, 200])
    comparison = compare_reports(old, new)
    assert [change.id for change in comparison.vanished] == ["cache/request-1"]
    assert comparison.regression


# ------------------------------------------------------------ the docs


def test_every_option_docs_reports_md_shows_exists() -> None:
    from pathlib import Path

    from reqfold.conformance.cli import build_parser

    docs = (Path(__file__).resolve().parents[2] / "docs" / "reports.md").read_text()
    parser = build_parser(["run", "probe"])  # a probe writes reports too
    commands = next(
        action
        for action in parser._subparsers._group_actions  # type: ignore[union-attr]
        if hasattr(action, "choices") and action.choices
    ).choices
    known = {
        option
        for name in ("run", "probe")
        for action in commands[name]._actions
        for option in action.option_strings
    }
    shown = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", docs))
    assert shown - known == set()
    assert {"--report-json", "--junit", "--report-md", "--report-html"} <= shown


def test_a_wrong_rejection_differs_in_its_code_whatever_its_kind() -> None:
    from reqfold.conformance.report.reproduction import answer_difference

    expected = {"error": {"kind": "malformed-header"}}
    assert answer_difference(expected, {"error": {"code": -32602}}) == "$.error.code"
    assert answer_difference(expected, {"result": {}}) == "$.error"
    assert answer_difference({"result": {"a": 1}}, {"result": {"a": 2}}) == "$.result.a"
    assert answer_difference(expected, None) is None


def test_a_stale_entry_does_not_excuse_a_lower_hit_ratio() -> None:
    old = minimal({"s@r/cache/request-1": "xpass"}, ratio=0.9)
    new = minimal({"s@r/cache/request-1": "pass"}, ratio=0.5)
    assert compare_reports(old, new).regression
    old = minimal({"s@r/cache/request-1": "fail"}, ratio=0.9)
    assert not compare_reports(old, new).regression  # a broken run: not judged


def test_markdown_links_and_images_in_an_adapters_words_are_escaped() -> None:
    built = dataclasses.replace(
        report(check(Outcome.PASS, "a")),
        startup_error="![x](https://host/pixel) [click](https://host) *bold*",
    )
    markdown = render_markdown(built)
    assert "![x](" not in markdown
    assert "[click](" not in markdown
    assert "\\!\\[x\\](https://host/pixel)" in markdown
