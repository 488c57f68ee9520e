"""The suite as pytest nodes: ``reqfold::vectors::<id>``, ``reqfold::scenarios::<id>``.

Each item is one check of ``reqfold run``, named by its stable id (a
vector: ``<revision>/<case id>``; a scenario check:
``<scenario>@<revision>/<check>``). It carries the rules it shows as a
``reqfold_rule`` marker, as keywords (``-k REQ-1``) and as JUnit
properties, and its outcome maps onto pytest's:

* ``pass``: passed;
* ``fail`` (a MUST broken): failed, the report saying the rules, what was
  expected and what was found;
* ``warn`` (a SHOULD broken): passed with a `ReqfoldShouldWarning`, or
  failed under ``--reqfold-strict``;
* ``error`` (no verdict: the implementation crashed, hung or broke the
  protocol): an error in setup, which fails the session as a failure does.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.pytest_plugin.names import MARKER, ReqfoldShouldWarning
from reqfold.conformance.pytest_plugin.state import STATE_KEY, SuiteState
from reqfold.conformance.verdict import Check

PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""Where ``conformance/`` lives: vector and scenario files are shown from here."""


SHOULD_FINDING = "a SHOULD-level finding, not a broken MUST"


class CheckProblem(Exception):
    """A check that did not pass; the message is its whole report."""


class ContractBroken(CheckProblem):
    """A failed check: the implementation broke a rule."""


class NoVerdict(CheckProblem):
    """An errored check: the implementation could not be judged on it."""


class PlanProblem(Exception):
    """Nothing could be collected (the implementation did not start...)."""


def _state(node: pytest.Item | pytest.Collector) -> SuiteState:
    return node.config.stash[STATE_KEY]


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(PACKAGE_ROOT))
    except ValueError:
        return str(path)


class ReqfoldSuite(pytest.Collector):
    """The ``reqfold`` node: the parts the implementation declares."""

    def collect(self) -> Iterator[pytest.Item | pytest.Collector]:
        plan = _state(self).plan(self.config)
        if plan.error is not None:
            raise PlanProblem(plan.error)
        if plan.vectors:
            yield VectorPart.from_parent(self, name="vectors")
        if plan.checks:
            yield ScenarioPart.from_parent(self, name="scenarios")

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str | Any:
        if isinstance(excinfo.value, PlanProblem):
            return f"reqfold: no check collected: {excinfo.value}"
        return super().repr_failure(excinfo)


class VectorPart(pytest.Collector):
    """Every vector case the implementation runs, under each declared revision."""

    def collect(self) -> Iterator[pytest.Item]:
        from reqfold.conformance.codec.loading import load_cases
        from reqfold.reference.revisions import Revision

        cases = {case.id: case for case in load_cases()}
        for revision, case_id in _state(self).plan(self.config).vectors:
            case = cases[case_id]
            yield VectorItem.from_parent(
                self,
                name=f"{revision}/{case_id}",
                revision=Revision(revision),
                case=case,
            )


class ScenarioPart(pytest.Collector):
    """Every check the judge gave on the scenarios played at collection."""

    def collect(self) -> Iterator[pytest.Item]:
        from reqfold.conformance.harness.scenarios import load_scenarios

        scenarios = {scenario.id: scenario for scenario in load_scenarios()}
        for check in _state(self).plan(self.config).checks:
            yield ScenarioCheckItem.from_parent(
                self,
                name=check.id,
                check=check,
                scenario=scenarios.get(check.scenario or ""),
            )


class CheckItem(pytest.Item):
    """One check: its rules, level and place; its outcome as pytest's."""

    def __init__(
        self, *, rules: Sequence[str], level: str, where: Path, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.rules = tuple(rules)
        self.level = level
        self.where = where
        self.add_marker(getattr(pytest.mark, MARKER)(*self.rules, level=level))
        self.extra_keyword_matches.update(self.rules)
        self.user_properties.extend(("reqfold_rule", rule) for rule in self.rules)
        self.user_properties.append(("reqfold_level", level))
        self._outcome = Outcome.ERROR
        self._message = ""
        self.expected = False
        """Listed as an expected failure: a broken SHOULD rule fails the item
        (an xfail), as ``reqfold run`` counts a listed warning."""

    def judged(self) -> tuple[Outcome, str]:
        """The check's outcome and message (runs it if it has not run)."""
        raise NotImplementedError

    def about(self) -> list[str]:
        """Lines that say what was checked (the vector, the scenario)."""
        raise NotImplementedError

    def setup(self) -> None:
        self._outcome, self._message = self.judged()
        self.user_properties.append(("reqfold_outcome", self._outcome.value))
        if self._outcome is Outcome.ERROR:
            raise NoVerdict(self._report("no verdict"))

    def runtest(self) -> None:
        outcome = self._outcome
        if outcome is Outcome.FAIL:
            raise ContractBroken(self._report("a MUST rule is broken"))
        if outcome is Outcome.WARN:
            if _state(self).options.strict or self.expected:
                why = (
                    "failed: listed as an expected failure"
                    if self.expected
                    else "failed by --reqfold-strict"
                )
                raise ContractBroken(self._report(f"{SHOULD_FINDING}, {why}"))
            # Shown at the vector's or scenario's file, not at this line.
            warnings.warn_explicit(
                ReqfoldShouldWarning(self._report(SHOULD_FINDING)),
                ReqfoldShouldWarning,
                _shown(self.where),
                0,
            )
        elif outcome is Outcome.SKIP:
            pytest.skip(self._message or "not run")

    def _report(self, verdict: str) -> str:
        from reqfold.conformance.rules import load_rules

        registry = load_rules()
        found = self._message.splitlines() or ["(no message)"]
        lines = [f"[{', '.join(self.rules)}] {verdict}: {found[0]}"]
        for rule in self.rules:
            known = registry.get(rule)
            said = f": {_first_sentence(known.text)}" if known is not None else ""
            level = known.level if known is not None else "?"
            lines.append(f"  rule      {rule} ({level}){said}")
        lines.extend(f"  {line}" for line in self.about())
        if len(found) > 1:  # the first line is on the first line already
            lines.append(f"  found     {found[0]}")
            lines.extend(f"            {line}" for line in found[1:])
        return "\n".join(lines)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, CheckProblem):
            return str(excinfo.value)
        if isinstance(excinfo.value, ReqfoldShouldWarning):
            return (
                f"{excinfo.value}\n  (a warning, made an error by the warning filters)"
            )
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.where, None, f"reqfold {self.name}"


def _first_sentence(text: str, limit: int = 160) -> str:
    sentence = text.split(". ", 1)[0].rstrip(".") + "."
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


class VectorItem(CheckItem):
    """One vector case under one revision, run against this process's codec."""

    def __init__(self, *, revision: Any, case: Any, **kwargs: Any) -> None:
        super().__init__(rules=case.rules, level=case.level, where=case.path, **kwargs)
        self.revision = revision
        self.case = case

    def judged(self) -> tuple[Outcome, str]:
        result = _state(self).codec().run(self.revision, self.case)
        return result.outcome, result.message

    def about(self) -> list[str]:
        case = self.case
        return [
            f"vector    {case.id}: {case.method} under {self.revision.value}"
            f" ({_shown(case.path)})",
            f"          {case.description}",
        ]


class ScenarioCheckItem(CheckItem):
    """One check of one scenario run, as the judge gave it at collection."""

    def __init__(self, *, check: Check, scenario: Any, **kwargs: Any) -> None:
        where = scenario.path if scenario is not None else PACKAGE_ROOT
        super().__init__(rules=check.rules, level=check.level, where=where, **kwargs)
        self.check = check
        self.scenario = scenario

    def judged(self) -> tuple[Outcome, str]:
        return self.check.outcome, self.check.message

    def about(self) -> list[str]:
        scenario = self.scenario
        revision = self.check.revision
        if scenario is None:
            return [f"scenario  {self.check.scenario} under {revision}"]
        return [
            f"scenario  {scenario.id} under {revision} ({_shown(scenario.path)})",
            f"          {scenario.title}",
        ]
