"""The working part of the plugin, registered only with ``--reqfold-impl``.

It adds the ``reqfold`` collector to the session's (so pytest counts,
selects, deselects and reports its items as any others: ``-k``, ``-m``,
``-x``, ``--lf``, xdist), hands the plan to xdist workers, gives setup
errors a report without a traceback, and ends the session with the
implementation's identity, the notes and the per-rule table.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.pytest_plugin.items import (
    CheckItem,
    CheckProblem,
    ContractBroken,
    ReqfoldSuite,
)
from reqfold.conformance.pytest_plugin.plan import Options, check_options
from reqfold.conformance.pytest_plugin.state import STATE_KEY, WORKER_KEY, SuiteState
from reqfold.conformance.verdict import Check, rules_level

PLUGIN_NAME = "reqfold-suite"


def activate(config: pytest.Config, impl: str) -> None:
    """Check the options and register the suite plugin (or stop with a usage error)."""
    revisions = config.getoption("reqfold_revision")
    scenarios = config.getoption("reqfold_scenario")
    options = Options(
        impl=impl,
        revisions=tuple(revisions) if revisions else None,
        scenarios=tuple(scenarios) if scenarios else None,
        timeout=config.getoption("reqfold_timeout"),
        strict=bool(config.getoption("reqfold_strict")),
    )
    problem = check_options(options)
    if problem is not None:
        raise pytest.UsageError(problem)
    state = SuiteState(options)
    state.expected = _expected_failures(config.getoption("reqfold_expected_failures"))
    config.stash[STATE_KEY] = state
    config.add_cleanup(state.close)
    config.pluginmanager.register(SuitePlugin(config, state), PLUGIN_NAME)


def _expected_failures(path: str | None) -> dict[str, str]:
    """The entries of ``--reqfold-expected-failures`` (check id -> reason), the
    file ``reqfold run --expected-failures`` reads; a usage error when unusable."""
    if path is None:
        return {}
    from reqfold.conformance.codec.loading import iter_cases
    from reqfold.conformance.harness.scenarios import load_scenarios
    from reqfold.conformance.report.expected import (
        ExpectedFailuresError,
        parse_expected,
        unknown_ids as unknown,
    )

    try:
        text = Path(path).read_text(encoding="utf-8")
        entries = parse_expected(text, name=f"--reqfold-expected-failures {path}")
    except (OSError, UnicodeDecodeError) as error:
        raise pytest.UsageError(
            f"--reqfold-expected-failures {path!r} cannot be read: {error}"
        ) from None
    except ExpectedFailuresError as error:
        raise pytest.UsageError(str(error)) from None
    cases = {case.id: case for _, case in iter_cases()}.values()
    strangers = unknown(entries, cases, load_scenarios())
    if strangers:
        raise pytest.UsageError(
            "--reqfold-expected-failures names no check of this suite: "
            + ", ".join(strangers)
        )
    return entries


class SuitePlugin:
    """The hooks (module docstring)."""

    def __init__(self, config: pytest.Config, state: SuiteState) -> None:
        self.config = config
        self.state = state
        self.checks: list[Check] = []
        self._checks_by_id: dict[str, Check] = {}
        self.xfail_marked: set[str] = set()
        """Ids of the checks that ran under an xfail mark (the verdict's
        expected failures, whoever marked them)."""
        """`Check` rows of every reqfold item reported, for the rule table."""

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(
        self, collector: pytest.Collector
    ) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            suite = ReqfoldSuite.from_parent(
                collector, name="reqfold", nodeid="reqfold"
            )
            report.result.append(suite)
        return report

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Expected failures become ``xfail(strict=True)`` marks: a listed check
        that fails (or only warns) is xfail, one that passes fails as stale."""
        expected = self.state.expected
        for item in items:
            if isinstance(item, CheckItem) and item.name in expected:
                item.expected = True
                # Only a broken rule is the expected failure: no verdict (a
                # crash, a hang) stays an error, as in reqfold run.
                item.add_marker(
                    pytest.mark.xfail(
                        strict=True, reason=expected[item.name], raises=ContractBroken
                    )
                )

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist, on the controller: every worker gets the one plan made here."""
        node.workerinput[WORKER_KEY] = self.state.plan(self.config).dump()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        excinfo = call.excinfo
        if (
            call.when == "setup"
            and excinfo is not None
            and isinstance(excinfo.value, CheckProblem)
        ):
            report.longrepr = str(excinfo.value)
        return report

    def _judged(self) -> dict[str, Check]:
        """The plan's scenario checks by id (empty while there is no plan)."""
        plan = self.state.made_plan()
        if plan is None:
            return {}
        if len(self._checks_by_id) != len(plan.checks):
            self._checks_by_id = {check.id: check for check in plan.checks}
        return self._checks_by_id

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown" or not report.nodeid.startswith("reqfold::"):
            return

        properties = report.user_properties
        rules = tuple(
            str(value) for name, value in properties if name == "reqfold_rule"
        )
        outcomes = [str(v) for name, v in properties if name == "reqfold_outcome"]
        if not outcomes:
            return
        part, _, check_id = report.nodeid.removeprefix("reqfold::").partition("::")
        if "xfail" in report.keywords:  # ours, or a conftest's mark
            self.xfail_marked.add(check_id)
        judged = self._judged().get(check_id)
        outcome = Outcome(outcomes[-1])
        self.checks.append(
            # a scenario check is the judge's, whole; a vector's is made here
            Check(
                part=part,
                id=check_id,
                revision="",
                rules=rules,
                level=rules_level(rules),
                outcome=outcome,
            )
            if judged is None
            else replace(judged, outcome=outcome)
        )

    def verdict_line(self) -> str:
        """``reqfold verdict: ...`` in the words of ``reqfold run`` (one
        vocabulary for every tool), over the reqfold items that ran."""
        from reqfold.conformance.verdict import (
            NO_VERDICT,
            exit_status,
            verdict_text,
        )

        if not self.checks:
            return "reqfold verdict: NO VERDICT: no reqfold check ran"
        expected = {
            **dict.fromkeys(self.xfail_marked, "marked xfail"),
            **self.state.expected,
        }
        strict = self.state.options.strict
        status = exit_status(self.checks, strict=strict, expected=expected)
        reasons = {NO_VERDICT: "some checks could not be run (see the errors above)"}
        return "reqfold verdict: " + verdict_text(
            status, self.checks, expected, reasons=reasons
        )

    def unseen_expected(self) -> list[str]:
        """Listed ids this session could have collected and did not: their
        scenario played to the end under their revision and gave no such
        check (a stale or misspelt check name). Vector ids never are:
        `unknown_ids` took only cases of their revision, and every case of a
        revision collected is an item or left out with its profile."""
        plan = self.state.made_plan()
        if not self.state.expected or plan is None or plan.error is not None:
            return []
        from reqfold.conformance.report.expected import unseen_ids

        checks = [check.id for check in plan.checks]
        played = {check.run for check in plan.checks if check.run is not None}
        return unseen_ids(self.state.expected, checks, played, ["scenarios"], [])

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """A listed check the run does not have makes a session that passed
        end with a usage error (else a misspelt entry would hide nothing,
        silently); a session that failed keeps its status."""
        if (
            not hasattr(self.config, "workerinput")
            and session.exitstatus == pytest.ExitCode.OK
            and self.unseen_expected()
        ):
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from reqfold.conformance.verdict import render_table, rule_table

        plan = self.state.made_plan()
        if plan is None or plan.error is not None:
            return
        identity = plan.identity
        write = terminalreporter.write_line
        terminalreporter.write_sep("-", "reqfold")
        name = f"{identity.get('name', '?')} {identity.get('version', '')}".strip()
        revisions = ", ".join(identity.get("revisions", [])) or "none"
        capabilities = ", ".join(identity.get("capabilities", [])) or "none"
        write(f"{name}; revisions: {revisions}; capabilities: {capabilities}")
        for note in plan.notes:
            write(f"note: {note}")
        rows = rule_table(self.checks)
        shown = (
            rows
            if self.config.get_verbosity() > 0
            else [row for row in rows if row.first_problem]
        )
        problems = sum(1 for row in rows if row.first_problem)
        write(
            f"{len(self.checks)} check(s) over {len(rows)} rule(s);"
            f" {problems} rule(s) with a problem"
            + ("" if shown is rows else " (-v lists every rule)")
        )
        if shown:
            for line in render_table(shown):
                write(line)
        write(self.verdict_line(), bold=True)
        unseen = self.unseen_expected()
        if unseen:
            write(
                "error: --reqfold-expected-failures names checks this run does"
                f" not have: {', '.join(unseen)} (their scenario played to the"
                " end under their revision and gave no such check)",
                red=True,
            )
