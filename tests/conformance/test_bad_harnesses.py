"""`reqfold run`: every known-bad harness is caught, by the check that should.

Each module in ``bad_harnesses/`` is the reference harness with one
realistic bug (a subclass of `reqfold.reference.loop.AgentLoop` or of
`reqfold.reference.shells.harness_adapter.HarnessServer`, or one function patched), run
as a real child process exactly as a harness in another language would be:
``reqfold run --impl "python bad_harnesses/NAME.py" --only scenarios
--scenario ID``. The gallery below says, per harness, the scenario that
shows its bug and the checks that must fail there, each with a rule it
names. The reference passes the same scenarios, even with ``--strict``.

Only the ``session-prefix`` revision is judged (``request-messages`` for
the scenario played only there) and only the scenario a harness needs, so
each run takes about a second of CPU. ``reqfold run``
itself is called in the test's process (`cli_in_process`: what it reports
is under test here, not its process boundary, which tests/conformance/
test_run_cli.py covers), so a run does not pay for importing the suite
again; the harness stays a real child process. Each test starts its own
run when it runs, so pytest-xdist spreads the runs over its workers. A run
that hangs fails its test after `RUN_TIMEOUT`.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.harness.scenarios import Scenario, load_scenarios

BAD = Path(__file__).parent / "bad_harnesses"
ROOT = Path(__file__).resolve().parents[2]
REVISION = "session-prefix"
RUN_TIMEOUT = 120
"""Seconds one ``reqfold run`` may take: a hang fails its test, never blocks."""

PROBLEM = re.compile(
    r"^\s+(?P<outcome>FAIL|WARN|ERROR)\s+scenarios\s+(?P<check>\S+)"
    r"\s+\[(?P<rules>[^\]]*)\]",
    re.MULTILINE,
)
"""A problem line of ``reqfold run``: ``OUTCOME part check-id [RULES]``."""


@dataclass(frozen=True, slots=True)
class Run:
    """What one ``reqfold run`` printed and how it exited."""

    status: int
    stdout: str
    stderr: str

    def problems(self) -> list[tuple[str, str, set[str]]]:
        """``(outcome, check id, rules)`` of every problem line."""
        return [
            (m["outcome"], m["check"], {r.strip() for r in m["rules"].split(",")})
            for m in PROBLEM.finditer(self.stdout)
        ]


@dataclass(frozen=True, slots=True)
class Job:
    """One ``reqfold run`` of some scenarios against an adapter command."""

    impl: str
    scenarios: tuple[str, ...]
    strict: bool = False
    revision: str = REVISION

    def run(self) -> Run:
        selection = [arg for name in self.scenarios for arg in ("--scenario", name)]
        status, stdout, stderr = reqfold_here(
            "run",
            *("--impl", self.impl, "--only", "scenarios", "--revision", self.revision),
            *selection,
            *(["--strict"] if self.strict else []),
            cwd=ROOT,
            limit=RUN_TIMEOUT,
        )
        return Run(status, stdout, stderr)


@dataclass(frozen=True, slots=True)
class Bad:
    """A known-bad harness, the scenario that shows its bug, the checks that fail."""

    harness: str
    scenario: str
    caught_by: tuple[tuple[str, str], ...]
    """``(check, rule)``: the check (its ID after ``<scenario>@<revision>/``)
    fails and names the rule."""
    strict: bool = False
    """Run with ``--strict``: the bug breaks a SHOULD only, so it warns."""
    only: bool = False
    """No other check fails."""
    revision: str = REVISION
    """The revision the scenario is played in."""

    @property
    def job(self) -> Job:
        command = shlex.join([sys.executable, str(BAD / f"{self.harness}.py")])
        return Job(command, (self.scenario,), self.strict, self.revision)

    def check_id(self, check: str) -> str:
        return f"{self.scenario}@{self.revision}/{check}"


def bad(
    harness: str,
    scenario: str,
    *caught_by: tuple[str, str],
    strict: bool = False,
    only: bool = False,
    revision: str = REVISION,
) -> Bad:
    return Bad(
        harness, scenario, caught_by, strict=strict, only=only, revision=revision
    )


GALLERY = [
    pytest.param(
        bad(
            "caches_cancelled_composition",
            "prefix-cancel-inside-composition",
            ("absent/SENTINEL-DEGRADED-7f3a", "PREFIX-5"),
            ("calls/catalog@i1", "PREFIX-5"),
            ("request-0", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "notices_cancel_after_the_reply",
            "prefix-cancel-inside-composition",
            ("send-1/requests", "PREFIX-5"),
            ("send-1/steps", "PREFIX-5"),
            ("calls/catalog@i1", "PREFIX-5"),
            ("absent/SENTINEL-DEGRADED-7f3a", "PREFIX-5"),
            ("request-0", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(  # the same bug when a dispose interrupts the composition
        bad(
            "notices_cancel_after_the_reply",
            "prefix-dispose-inside-composition",
            ("send-1/requests", "PREFIX-5"),
            ("send-1/steps", "PREFIX-5"),
            ("absent/SENTINEL-DEGRADED-7f3a", "PREFIX-5"),
            ("request-0", "PREFIX-6"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5", "PREFIX-6"),
    ),
    pytest.param(
        bad(
            "placeholder_for_an_empty_prefix",
            "prefix-empty-composition",
            ("send-1/request-0", "PREFIX-3"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-3"),
    ),
    pytest.param(
        bad(
            "first_snapshot_says_resume",
            "plain-turns",
            ("anchor/i1", "WRITER-1"),
            ("log/WRITER-6", "WRITER-6"),
            only=True,
        ),
        marks=pytest.mark.spec("WRITER-1", "WRITER-6"),
    ),
    pytest.param(
        bad(
            "notes_a_resume_on_the_wire",
            "resume-without-drift",
            ("log/REQ-5", "REQ-5"),
            ("cache/request-3", "CACHE-3"),
            strict=True,
            only=True,
        ),
        marks=pytest.mark.spec("REQ-5", "CACHE-3"),
    ),
    pytest.param(
        bad(
            "assembly_built_once",
            "system-change-between-turns",
            ("request-1", "REQ-6"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-2", "REQ-6"),
    ),
    pytest.param(
        bad(
            "assembly_built_once",
            "tool-added-between-turns",
            ("request-1", "REQ-6"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-2", "REQ-6"),
    ),
    pytest.param(
        bad(
            "assembly_built_once",
            "tool-removed-between-turns",
            ("request-1", "REQ-6"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-2", "REQ-6"),
    ),
    pytest.param(
        bad(
            "assembly_built_once",
            "tool-inserted-in-the-middle",
            ("request-1", "REQ-6"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-2", "REQ-6"),
    ),
    pytest.param(
        bad(
            "config_built_once",
            "model-change-between-turns",
            ("request-1", "WIRE-1"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-6", "WIRE-1"),
    ),
    pytest.param(
        bad(
            "drops_an_injection_while_idle",
            "inject-while-idle-joins-the-next-request",
            ("request-1", "DERIVE-2"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-1", "DERIVE-2"),
    ),
    pytest.param(
        bad(
            "framing_kept_when_none_is_given",
            "request-messages-framing",
            ("request-3", "RMSG-2"),
            only=True,
            revision="request-messages",
        ),
        marks=pytest.mark.spec("RMSG-2", "HDR-4"),
    ),
    pytest.param(
        bad(
            "elides_tool_output_on_the_wire",
            "tool-call-turn",
            ("request-1", "REQ-1"),
            ("log/REQ-1", "REQ-1"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-1"),
    ),
    pytest.param(
        bad(
            "composes_after_the_boundary",
            "prefix-append-while-composing",
            ("request-0", "PREFIX-4"),
        ),
        marks=pytest.mark.spec("PREFIX-4"),
    ),
    pytest.param(
        bad(
            "recomposes_every_turn",
            "prefix-composed-once",
            ("calls/rules@i1", "PREFIX-1"),
            ("calls/skills@i1", "PREFIX-1"),
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(  # the same bug where a composing contributor appends
        bad(
            "recomposes_every_turn",
            "prefix-append-while-composing",
            ("calls/notes@i1", "PREFIX-1"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(  # the same bug across a resume
        bad(
            "recomposes_every_turn",
            "resume-without-drift",
            ("calls/rules@i1", "PREFIX-1"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(
        bad(
            "resume_reuses_logged_prefix",
            "resume-with-drift",
            ("calls/skills@i2", "PREFIX-6"),
            ("request-1", "PREFIX-6"),
        ),
        marks=pytest.mark.spec("PREFIX-6"),
    ),
    pytest.param(
        bad(
            "logs_initial_on_resume",
            "resume-without-drift",
            ("log/WRITER-6", "WRITER-6"),
            ("anchor/i2", "WRITER-1"),
            only=True,
        ),
        marks=pytest.mark.spec("WRITER-6", "WRITER-1"),
    ),
    pytest.param(
        bad(
            "ignores_the_seed",
            "seeded-session-continues",
            ("request-0", "LOG-6"),
            only=True,
        ),
        marks=pytest.mark.spec("LOG-6"),
    ),
    pytest.param(
        bad(
            "writer_state_survives_resume",
            "resume-with-drift",
            ("log/PREFIX-2", "PREFIX-2"),
            ("anchor/i2", "WRITER-1"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-2", "WRITER-1"),
    ),
    pytest.param(
        bad(
            "derives_history_before_composing",
            "prefix-append-while-composing",
            ("request-0", "PREFIX-4"),
            ("log/REQ-1", "REQ-1"),
        ),
        marks=pytest.mark.spec("PREFIX-4", "REQ-1"),
    ),
    pytest.param(
        bad(
            "derives_history_after_step_start",
            "step-start-append-joins-the-next-request",
            ("request-0", "REQ-1"),
            ("log/REQ-1", "REQ-1"),
        ),
        marks=pytest.mark.spec("REQ-1"),
    ),
    pytest.param(
        bad(
            "adds_unlogged_reminder",
            "plain-turns",
            ("log/REQ-1", "REQ-1"),
            ("cache/request-1", "CACHE-1"),
            ("cache/request-2", "CACHE-1"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-1", "CACHE-1"),
    ),
    pytest.param(
        bad(
            "tool_reorder_as_delta",
            "tool-reorder-between-turns",
            ("log/WRITER-3", "WRITER-3"),
            ("request-1", "REQ-2"),
        ),
        marks=pytest.mark.spec("WRITER-3", "REQ-2"),
    ),
    pytest.param(
        bad(
            "sampling_set_on_the_client",
            "config-change-between-turns",
            ("log/WIRE-4", "WIRE-4"),
        ),
        marks=pytest.mark.spec("WIRE-4"),
    ),
    pytest.param(
        bad(
            "throwing_composition_stays_cached",
            "prefix-throwing-contributor",
            ("calls/catalog@i1", "PREFIX-5"),
            ("send-2/request-0", "PREFIX-5"),
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "cancel_by_throwing_ends_error",
            "prefix-cancel-honoured-by-throwing",
            ("send-1/end", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "resume_skips_unchanged_snapshot",
            "resume-without-drift",
            ("anchor/i2", "WRITER-1"),
            only=True,
        ),
        marks=pytest.mark.spec("WRITER-1"),
    ),
    pytest.param(
        bad(
            "dispose_ends_turn_aborted",
            "prefix-dispose-inside-composition",
            ("send-1/end", "PREFIX-5"),
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "saves_disposed_composition",
            "prefix-dispose-inside-composition",
            ("absent/SENTINEL-DEGRADED-7f3a", "PREFIX-5"),
            ("calls/catalog@i2", "PREFIX-6"),
            ("request-0", "PREFIX-6"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5", "PREFIX-6"),
    ),
    pytest.param(
        bad(
            "silent_sliding_window",
            "plain-turns",
            ("log/REQ-1", "REQ-1"),
            ("cache/request-2", "CACHE-1"),
        ),
        marks=pytest.mark.spec("REQ-1", "CACHE-1"),
    ),
    pytest.param(
        bad(
            "drops_earlier_reasoning",
            "reasoning-kept-across-turns",
            ("log/REQ-1", "REQ-1"),
            ("cache/request-2", "CACHE-1"),
        ),
        marks=pytest.mark.spec("REQ-1", "CACHE-1"),
    ),
    pytest.param(
        bad(
            "timestamp_in_system_prompt",
            "tool-calls-chained-in-one-turn",
            ("log/CACHE-2", "CACHE-2"),
            strict=True,
            only=True,
        ),
        marks=pytest.mark.spec("CACHE-2"),
    ),
    pytest.param(  # the same bug across turns of one request each
        bad(
            "timestamp_in_system_prompt",
            "plain-turns",
            ("log/CACHE-2", "CACHE-2"),
            strict=True,
            only=True,
        ),
        marks=pytest.mark.spec("CACHE-2"),
    ),
    pytest.param(
        bad(
            "compaction_recomposes_prefix",
            "compaction-keeps-prefix-and-system",
            ("calls/rules@i1", "PREFIX-7"),
        ),
        marks=pytest.mark.spec("PREFIX-1", "PREFIX-7"),
    ),
    pytest.param(
        bad(
            "reports_the_cancel_not_the_log",
            "prefix-cancel-honoured-by-throwing",
            ("send-1/ended", "TURN-5"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-5"),
    ),
    pytest.param(
        bad(
            "counts_turns_per_instance",
            "resume-without-drift",
            ("send-3/ended", "TURN-5"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-5"),
    ),
    pytest.param(  # composed inside the step: the aborted turn holds a step
        bad(
            "composes_after_the_boundary",
            "prefix-cancel-honoured-by-throwing",
            ("send-1/steps", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "composes_after_the_boundary",
            "prefix-dispose-inside-composition",
            ("send-1/steps", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "composes_after_the_boundary",
            "prefix-cancel-inside-composition",
            ("send-1/steps", "PREFIX-5"),
            ("calls/catalog@i1", "PREFIX-5"),
            ("request-0", "PREFIX-5"),
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "cancelled_composition_ends_completed",
            "prefix-cancel-inside-composition",
            ("send-1/end", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "throw_clears_the_cancel",
            "prefix-cancel-honoured-by-throwing",
            ("send-1/requests", "PREFIX-5"),
            ("send-1/end", "PREFIX-5"),
            ("send-1/steps", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "recomposes_after_an_interruption",
            "prefix-dispose-inside-composition",
            ("calls/catalog@i1", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "seeded_session_skips_composition",
            "seeded-session-continues",
            ("calls/rules@i1", "PREFIX-6"),
            ("request-0", "REQ-1"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-6", "REQ-1"),
    ),
    pytest.param(
        bad(
            "drops_a_step_start_append",
            "step-start-append-joins-the-next-request",
            ("request-1", "REQ-1"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-1"),
    ),
    pytest.param(
        bad(
            "throwing_composition_stays_cached",
            "prefix-cancel-honoured-by-throwing",
            ("calls/catalog@i1", "PREFIX-5"),
            ("request-0", "PREFIX-5"),
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "recomposes_every_turn",
            "prefix-empty-composition",
            ("calls/nothing@i1", "PREFIX-1"),
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(
        bad(
            "recomposes_every_turn",
            "prefix-release-after-blocking",
            ("calls/catalog@i1", "PREFIX-1"),
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(
        bad(
            "resume_reuses_logged_prefix",
            "resume-without-drift",
            ("calls/rules@i2", "PREFIX-6"),
        ),
        marks=pytest.mark.spec("PREFIX-6"),
    ),
    pytest.param(
        bad(
            "elides_tool_output_on_the_wire",
            "tool-calls-chained-in-one-turn",
            ("request-2", "REQ-1"),
        ),
        marks=pytest.mark.spec("REQ-1"),
    ),
    pytest.param(
        bad(
            "leaves_the_step_open_on_a_cancel",
            "cancel-mid-request",
            ("log/TURN-2", "TURN-2"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-2"),
    ),
    pytest.param(
        bad(
            "leaves_the_step_open_on_a_cancel",
            "cancel-mid-request-after-a-tool",
            ("log/TURN-2", "TURN-2"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-2"),
    ),
    pytest.param(
        bad(
            "leaves_the_step_open_on_a_cancel",
            "dispose-mid-request",
            ("log/TURN-2", "TURN-2"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-2"),
    ),
    pytest.param(
        bad(
            "leaves_the_step_open_on_a_cancel",
            "cancel-mid-tool",
            ("log/TURN-2", "TURN-2"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-2"),
    ),
    pytest.param(
        bad(
            "leaves_the_step_open_on_a_cancel",
            "dispose-mid-tool",
            ("log/TURN-2", "TURN-2"),
            only=True,
        ),
        marks=pytest.mark.spec("TURN-2"),
    ),
    pytest.param(
        bad(
            "drops_an_injection_while_busy",
            "inject-while-busy-joins-the-next-request",
            ("request-1", "REQ-1"),
            only=True,
        ),
        marks=pytest.mark.spec("REQ-1", "DERIVE-2"),
    ),
    pytest.param(
        bad(
            "skips_a_throwing_contributor",
            "prefix-throwing-contributor",
            ("send-1/end", "PREFIX-5"),
            ("send-1/requests", "PREFIX-5"),
            ("send-1/steps", "PREFIX-5"),
            ("calls/catalog@i1", "PREFIX-5"),
            ("send-2/request-0", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(
        bad(
            "composes_after_the_boundary",
            "prefix-throwing-contributor",
            ("send-1/steps", "PREFIX-5"),
            only=True,
        ),
        marks=pytest.mark.spec("PREFIX-5"),
    ),
    pytest.param(  # the window drops the prefix with the oldest prompts
        bad(
            "silent_sliding_window",
            "prefix-composed-once",
            ("request-0", "PREFIX-1"),
            ("request-3", "PREFIX-1"),
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(
        bad(
            "silent_sliding_window",
            "prefix-release-after-blocking",
            ("request-1", "PREFIX-1"),
        ),
        marks=pytest.mark.spec("PREFIX-1"),
    ),
    pytest.param(
        bad(
            "silent_sliding_window",
            "compaction-keeps-prefix-and-system",
            ("send-3/request-0", "PREFIX-7"),
        ),
        marks=pytest.mark.spec("PREFIX-7"),
    ),
    pytest.param(
        bad(
            "silent_sliding_window",
            "request-messages-framing",
            ("request-0", "RMSG-1"),
            ("request-1", "RMSG-2"),
            revision="request-messages",
        ),
        marks=pytest.mark.spec("RMSG-1", "RMSG-2"),
    ),
]

CASES: list[Bad] = [param.values[0] for param in GALLERY]
REFERENCES = [
    Job(
        shlex.join([sys.executable, "-m", "reqfold.reference.harness_adapter"]),
        tuple(sorted({case.scenario for case in CASES if case.revision == revision})),
        strict=True,
        revision=revision,
    )
    for revision in sorted({case.revision for case in CASES})
]
"""The reference over the gallery's scenarios, one run per revision they use."""
TIMESTAMP = next(case for case in CASES if case.harness == "timestamp_in_system_prompt")
LENIENT = Job(TIMESTAMP.job.impl, TIMESTAMP.job.scenarios)


@pytest.mark.slow
@pytest.mark.parametrize("bad", GALLERY, ids=lambda case: case.harness)
def test_a_known_bad_harness_fails_the_checks_that_show_its_bug(
    bad: Bad,
) -> None:
    run = bad.job.run()
    assert "Traceback" not in run.stderr, run.stderr
    assert run.status == 1, run.stdout
    allowed = {"FAIL", "WARN"} if bad.strict else {"FAIL"}
    failing = [
        (check, rules) for outcome, check, rules in run.problems() if outcome in allowed
    ]
    for check, rule in bad.caught_by:
        wanted = bad.check_id(check)
        assert any(
            (found == wanted or found.startswith(wanted + "#")) and rule in rules
            for found, rules in failing
        ), f"no failing check {wanted} naming {rule}:\n{run.stdout}"
    if bad.only:
        expected = {bad.check_id(check) for check, _ in bad.caught_by}
        problems = {found.partition("#")[0] for _, found, _ in run.problems()}
        assert problems == expected


@pytest.mark.slow
@pytest.mark.parametrize("job", REFERENCES, ids=lambda job: job.revision)
def test_the_reference_passes_every_scenario_of_the_gallery_even_strictly(
    job: Job,
) -> None:
    run = job.run()
    assert run.status == 0, run.stdout
    assert run.problems() == []
    assert "Verdict: CONFORMANT" in run.stdout


@pytest.mark.slow
@pytest.mark.spec("CACHE-2")
@pytest.mark.parametrize("job", [LENIENT], ids=[TIMESTAMP.harness])
def test_a_harness_breaking_only_a_should_is_conformant_without_strict(
    job: Job,
) -> None:
    run = job.run()
    assert run.status == 0, run.stdout
    assert [(outcome, check) for outcome, check, _ in run.problems()] == [
        ("WARN", TIMESTAMP.check_id("log/CACHE-2"))
    ]


def test_every_known_bad_harness_is_in_the_gallery() -> None:
    modules = {path.stem for path in BAD.glob("*.py") if not path.stem.startswith("_")}
    assert modules == {case.harness for case in CASES}


def test_every_known_bad_harness_names_its_scenario_in_its_docstring() -> None:
    for case in CASES:
        source = (BAD / f"{case.harness}.py").read_text(encoding="utf-8")
        assert source.startswith('"""'), case.harness
        assert f"``{case.scenario}``" in source.split('"""')[1], case.harness


def test_every_known_bad_harness_is_listed_in_the_scenario_docs() -> None:
    docs = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    _, heading, gallery = docs.partition("\n## Known-bad harnesses\n")
    assert heading
    assert [case.harness for case in CASES if f"`{case.harness}`" not in gallery] == []


def expectation_checks(scenario: Scenario) -> list[str]:
    """The checks a scenario's own expectations make (ids after
    ``<scenario>@<revision>/``): each send's ``end``, ``requests`` and
    ``steps`` where it names rules, every ``calls``, ``absent`` and
    ``request`` expectation; and ``send-N/ended``, which every send makes."""
    checks: list[str] = []
    sends = [step for step in scenario.steps if step.action == "send"]
    for number, step in enumerate(sends, start=1):
        if step.expect.get("rules"):
            checks += [
                f"send-{number}/{k}" for k in EXPECTED_OF_A_SEND if k in step.expect
            ]
    for item in scenario.expect:
        if item["check"] == "calls":
            checks.append(f"calls/{item['contributor']}@{item['instance']}")
        elif item["check"] == "absent":
            checks.append(f"absent/{item['text']}")
        else:
            send = f"send-{item['send']}/" if "send" in item else ""
            checks.append(f"{send}request-{item['index']}")
    return list(dict.fromkeys(checks))


EXPECTED_OF_A_SEND = ("end", "requests", "steps")


def test_every_check_of_every_scenario_is_failed_by_a_known_bad_harness() -> None:
    """No check that nothing has ever failed: each expectation of each
    scenario (in the revision the gallery plays it) is in some known-bad
    harness's ``caught_by``, which the gallery test shows failing; and
    ``send-N/ended``, which every send makes, is failed somewhere."""
    caught: dict[tuple[str, str], set[str]] = {}
    for case in CASES:
        caught.setdefault((case.scenario, case.revision), set()).update(
            check for check, _ in case.caught_by
        )
    never_failed = []
    for scenario in load_scenarios():
        revisions = [revision.value for revision in scenario.revisions]
        revision = REVISION if REVISION in revisions else revisions[0]
        found = caught.get((scenario.id, revision), set())
        never_failed += [
            f"{scenario.id}@{revision}/{check}"
            for check in expectation_checks(scenario)
            if check not in found
        ]
    assert never_failed == []
    assert any(
        check.endswith("/ended") for checks in caught.values() for check in checks
    )
