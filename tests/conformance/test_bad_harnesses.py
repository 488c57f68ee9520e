"""`reqfold run`: every known-bad harness is caught, by the check that should.

Each module in ``bad_harnesses/`` is the reference harness with one
realistic defect, written through a documented seam of the reference (a
subclass of `reqfold.reference.loop.AgentLoop` or of
`reqfold.reference.shells.harness_adapter.HarnessServer`: docs/
reference-harness.md, "Seams for known-bad variants"), run as a real child
process exactly as a harness in another language would be:
``reqfold run --impl "python bad_harnesses/NAME.py" --only scenarios
--scenario ID --report-json F``. ``bad_harnesses/catches.toml`` is the one
place that says, per harness, the scenario that shows its defect and the
checks that must fail there, each with a rule it names; the tests read
what failed from the JSON report, never from the terminal. The reference
passes the same scenarios, even with ``--strict``.

Only the ``session-prefix`` revision is judged (``request-messages`` for
the scenario played only there) and only the scenario a harness needs.
``reqfold run`` itself is called in the test's process (`cli_in_process`:
what it reports is under test here, not its process boundary, which
tests/conformance/test_run_cli.py covers); the harness stays a real child
process. Each test starts its own run, so pytest-xdist spreads the runs
over its workers. A run that hangs fails its test after `RUN_TIMEOUT`.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.harness.scenarios import Scenario, load_scenarios

BAD = Path(__file__).parent / "bad_harnesses"
CATCHES = BAD / "catches.toml"
ROOT = Path(__file__).resolve().parents[2]
REVISION = "session-prefix"
RUN_TIMEOUT = 120
"""Seconds one ``reqfold run`` may take: a hang fails its test, never blocks."""

PROBLEMS = ("fail", "warn", "error")
"""The statuses of a check in the JSON report that make it a problem."""


@dataclass(frozen=True, slots=True)
class Run:
    """How one ``reqfold run`` exited, what it printed, and its JSON report."""

    status: int
    stdout: str
    stderr: str
    report: dict[str, Any]

    def problems(self) -> list[tuple[str, str, set[str]]]:
        """``(status, check id, rules)`` of every check that is a problem."""
        return [
            (check["status"], check["id"], set(check["rules"]))
            for check in self.report["checks"]
            if check["status"] in PROBLEMS
        ]

    def message(self, check_id: str) -> str:
        """What the report says of the check `check_id` ("" if absent)."""
        return next(
            (
                str(check["message"])
                for check in self.report["checks"]
                if check["id"] == check_id
            ),
            "",
        )


@dataclass(frozen=True, slots=True)
class Job:
    """One ``reqfold run`` of some scenarios against an adapter command."""

    impl: str
    scenarios: tuple[str, ...]
    strict: bool = False
    revision: str = REVISION
    timeout: float | None = None
    """``--timeout``: how long the adapter may stay silent (None: the
    default, 10 s)."""

    def run(self) -> Run:
        selection = [arg for name in self.scenarios for arg in ("--scenario", name)]
        with tempfile.TemporaryDirectory(prefix="reqfold-gallery-") as folder:
            report = Path(folder) / "run.json"
            status, stdout, stderr = reqfold_here(
                "run",
                *(
                    "--impl",
                    self.impl,
                    "--only",
                    "scenarios",
                    "--revision",
                    self.revision,
                ),
                *selection,
                *(["--strict"] if self.strict else []),
                *(["--timeout", f"{self.timeout:g}"] if self.timeout else []),
                *("--report-json", str(report)),
                cwd=ROOT,
                limit=RUN_TIMEOUT,
            )
            assert report.is_file(), f"no JSON report:\n{stdout}\n{stderr}"
            data = json.loads(report.read_text(encoding="utf-8"))
        return Run(status, stdout, stderr, data)


@dataclass(frozen=True, slots=True)
class Bad:
    """A known-bad harness, the scenario that shows its defect, the checks that fail.

    One ``[[catch]]`` row of ``bad_harnesses/catches.toml``, which says what
    each field means.
    """

    harness: str
    scenario: str
    caught_by: tuple[tuple[str, str], ...]
    """``(check, rule)``: the check (its ID after ``<scenario>@<revision>/``)
    fails and names the rule."""
    also: tuple[str, ...] = ()
    """Rules the row demonstrates besides those of `caught_by`."""
    errors: tuple[tuple[str, str], ...] = ()
    """``(check, cause)``: the check errors and its message starts with the
    cause (``timeout``); no other check may error (a harness that crashes
    is not showing its defect)."""
    strict: bool = False
    """Run with ``--strict``: the defect breaks a SHOULD only, so it warns."""
    only: bool = False
    """No other check fails."""
    revision: str = REVISION
    """The revision the scenario is played in."""
    timeout: float | None = None
    """The run's ``--timeout`` (a row whose harness hangs once its defect
    is shown waits this long, not the default 10 s)."""

    @property
    def rules(self) -> tuple[str, ...]:
        """Every rule the row demonstrates: its spec marks."""
        named = [rule for _, rule in self.caught_by] + list(self.also)
        return tuple(dict.fromkeys(named))

    @property
    def job(self) -> Job:
        command = shlex.join([sys.executable, str(BAD / f"{self.harness}.py")])
        return Job(command, (self.scenario,), self.strict, self.revision, self.timeout)

    def check_id(self, check: str) -> str:
        return f"{self.scenario}@{self.revision}/{check}"


ROW_KEYS = {
    "harness",
    "scenario",
    "revision",
    "fails",
    "also",
    "errors",
    "only",
    "strict",
    "timeout",
}


def load_catches(path: Path = CATCHES) -> list[Bad]:
    """The rows of ``catches.toml``; an unknown key is an error, not a silent no-op."""
    rows = tomllib.loads(path.read_text(encoding="utf-8"))["catch"]
    cases = []
    for row in rows:
        name = row.get("harness")
        unknown = set(row) - ROW_KEYS
        assert not unknown, f"{name}: unknown keys {sorted(unknown)}"
        assert row.get("fails"), f"{name}: `fails` names no check (nothing shown)"
        errors = tuple((check, cause) for check, cause in row.get("errors", ()))
        assert not errors or row.get("timeout"), (
            f"{name}: a row with `errors` sets a short `timeout`"
        )
        cases.append(
            Bad(
                row["harness"],
                row["scenario"],
                tuple((check, rule) for check, rule in row["fails"]),
                also=tuple(row.get("also", ())),
                errors=errors,
                strict=row.get("strict", False),
                only=row.get("only", False),
                revision=row.get("revision", REVISION),
                timeout=row.get("timeout"),
            )
        )
    return cases


GALLERY = [
    pytest.param(case, marks=pytest.mark.spec(*case.rules)) for case in load_catches()
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
    allowed = {"fail", "warn"} if bad.strict else {"fail"}
    failing = [
        (check, rules) for status, check, rules in run.problems() if status in allowed
    ]
    for check, rule in bad.caught_by:
        wanted = bad.check_id(check)
        assert any(
            (found == wanted or found.startswith(wanted + "#")) and rule in rules
            for found, rules in failing
        ), f"no failing check {wanted} naming {rule}: {run.problems()}"
    shown = {rule for _, rules in failing for rule in rules}
    assert set(bad.also) <= shown, (
        f"`also` names a rule no failing check names: {shown}"
    )
    erroring = {found for status, found, _ in run.problems() if status == "error"}
    assert erroring == {bad.check_id(check) for check, _ in bad.errors}, run.problems()
    for check, cause in bad.errors:
        message = run.message(bad.check_id(check))
        assert message.startswith(f"{cause}:"), message
    if bad.only:
        expected = {bad.check_id(check) for check, _ in bad.caught_by}
        expected |= {bad.check_id(check) for check, _ in bad.errors}
        problems = {found.partition("#")[0] for _, found, _ in run.problems()}
        assert problems == expected, run.problems()


@pytest.mark.slow
@pytest.mark.parametrize("job", REFERENCES, ids=lambda job: job.revision)
def test_the_reference_passes_every_scenario_of_the_gallery_even_strictly(
    job: Job,
) -> None:
    run = job.run()
    assert run.status == 0, run.stdout
    assert run.problems() == []
    assert run.report["verdict"] == {"exitStatus": 0, "text": "CONFORMANT"}


@pytest.mark.slow
@pytest.mark.spec("CACHE-2")
@pytest.mark.parametrize("job", [LENIENT], ids=[TIMESTAMP.harness])
def test_a_harness_breaking_only_a_should_is_conformant_without_strict(
    job: Job,
) -> None:
    run = job.run()
    assert run.status == 0, run.stdout
    assert [(status, check) for status, check, _ in run.problems()] == [
        ("warn", TIMESTAMP.check_id("log/CACHE-2"))
    ]


def test_every_known_bad_harness_is_in_the_gallery() -> None:
    modules = {path.stem for path in BAD.glob("*.py") if not path.stem.startswith("_")}
    assert modules == {case.harness for case in CASES}


def test_a_known_bad_harness_docstring_says_its_defect_and_not_its_catches() -> None:
    """What a harness must fail is said in ``catches.toml`` only: its
    docstring names no scenario and none of its checks."""
    scenarios = {scenario.id for scenario in load_scenarios()}
    for case in CASES:
        source = (BAD / f"{case.harness}.py").read_text(encoding="utf-8")
        assert source.startswith('"""'), case.harness
        docstring = source.split('"""')[1]
        assert docstring.strip(), case.harness
        named = [name for name in scenarios if f"``{name}``" in docstring]
        named += [check for check, _ in case.caught_by if f"``{check}``" in docstring]
        assert named == [], case.harness


ROW = '[[catch]]\nharness = "h"\nscenario = "s"\n'
FAILS = 'fails = [["run", "PREFIX-1"]]\n'


@pytest.mark.parametrize(
    ("row", "refusal"),
    [
        (ROW + FAILS + "onyl = true\n", "unknown keys"),
        (ROW + "fails = []\n", "`fails` names no check"),
        (ROW + FAILS + 'errors = [["run", "timeout"]]\n', "short `timeout`"),
    ],
    ids=["unknown-key", "empty-fails", "errors-without-timeout"],
)
def test_a_row_of_the_catches_that_shows_nothing_surely_is_refused(
    tmp_path: Path, row: str, refusal: str
) -> None:
    table = tmp_path / "catches.toml"
    table.write_text(row, encoding="utf-8")
    with pytest.raises(AssertionError, match=refusal):
        load_catches(table)


def test_a_row_of_the_catches_reads_its_errors_and_timeout(tmp_path: Path) -> None:
    table = tmp_path / "catches.toml"
    table.write_text(
        ROW + FAILS + 'errors = [["run", "timeout"]]\ntimeout = 2\n', encoding="utf-8"
    )
    (row,) = load_catches(table)
    assert row.errors == (("run", "timeout"),)
    assert row.job.timeout == 2


def test_every_known_bad_harness_is_listed_in_the_scenario_docs() -> None:
    docs = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    _, heading, gallery = docs.partition("\n## Known-bad harnesses\n")
    assert heading
    assert [case.harness for case in CASES if f"`{case.harness}`" not in gallery] == []


def documented_catches() -> dict[str, set[str]]:
    """The scenarios docs/scenarios.md's gallery table says catch each
    harness (the revision a scenario is played in, when named, left out)."""
    docs = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    _, _, gallery = docs.partition("\n## Known-bad harnesses\n")
    table: dict[str, set[str]] = {}
    for line in gallery.split("\n## ")[0].splitlines():
        cells = line.strip("|").split("|")
        if len(cells) == 3 and (name := re.fullmatch(r" `(\w+)` ", cells[0])):
            named = set(re.findall(r"`([\w-]+)`", cells[2]))
            table[name.group(1)] = named - {REVISION, "request-messages"}
    return table


def test_the_scenario_docs_name_for_each_harness_the_scenarios_of_its_catches() -> None:
    wanted: dict[str, set[str]] = {}
    for case in CASES:
        wanted.setdefault(case.harness, set()).add(case.scenario)
    assert documented_catches() == wanted


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
