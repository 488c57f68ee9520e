"""What a pytest session checks: decided once, from the implementation's answers.

`make_plan` plays the harness scenarios (their check ids exist only once a
run has been judged, and pytest needs every item's id before it runs one)
and reads the implementation's ``initialize`` answer from that start, so
what is collected follows what the implementation declares, like
``reqfold run``:

* ``codec`` declared: one vector item per case and declared revision, run
  later, item by item (`reqfold.conformance.pytest_plugin.codec`);
* ``harness`` declared: one item per check of every scenario run, carrying
  the result the judge already gave.

A `Plan` is plain data with a JSON form (`dump`, `load`), so the xdist
controller makes it once and hands it to every worker: the workers collect
the same items without playing the scenarios again.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from reqfold.conformance.verdict import Check
from reqfold.reference.json_values import JsonObject, JsonValue

FORMAT = "reqfold-pytest-plan/2"
"""The plan's JSON form: /2 since a check is `Check.dump`'s (with its
duration and every scenario fact)."""


class PlanError(Exception):
    """Nothing can be collected: the implementation did not start, or the
    options ask for what it does not declare. The message says which."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """The plugin's command-line options, checked (`check_options`)."""

    impl: str
    revisions: tuple[str, ...] | None = None
    scenarios: tuple[str, ...] | None = None
    timeout: float = 10.0
    strict: bool = False


MAX_TIMEOUT = 86_400.0
"""The longest --reqfold-timeout taken, as for ``reqfold run --timeout``."""


def check_options(options: Options) -> str | None:
    """What is wrong with the options, in one line, or None."""
    from reqfold.conformance.adapters.lifecycle import REFERENCE
    from reqfold.reference.revisions import parse_revision

    if options.impl != REFERENCE:
        try:
            argv = shlex.split(options.impl)
        except ValueError as error:
            return (
                f"--reqfold-impl {options.impl!r} cannot be split like a shell"
                f" would: {error}"
            )
        if not argv:
            return "--reqfold-impl is empty: give the adapter command"
    for name in options.revisions or ():
        try:
            parse_revision(name)
        except ValueError as error:
            return f"--reqfold-revision: {error}"
    if options.scenarios:
        from reqfold.conformance.harness.scenarios import load_scenarios

        known = {scenario.id for scenario in load_scenarios()}
        unknown = [name for name in options.scenarios if name not in known]
        if unknown:
            from reqfold.conformance.harness.scenario_names import (
                unknown_scenarios,
            )

            return unknown_scenarios("--reqfold-scenario", unknown, known)
    if not (0 < options.timeout <= MAX_TIMEOUT):  # also refuses nan
        return f"--reqfold-timeout must be a number of seconds in (0, {MAX_TIMEOUT:g}]"
    return None


@dataclass(slots=True, kw_only=True)
class Plan:
    """What to collect: the identity, the vectors to run, the judged checks."""

    identity: JsonObject = field(default_factory=dict)
    vectors: list[tuple[str, str]] = field(default_factory=list)
    """``(revision, case id)`` of every vector to run, in corpus order."""
    checks: list[Check] = field(default_factory=list)
    """Every scenario check, in play order."""
    notes: list[str] = field(default_factory=list)
    """What was left out, and why (shown at the end of the session)."""
    error: str | None = None
    """Why nothing can be collected (`PlanError`), else None."""

    def dump(self) -> JsonObject:
        """The JSON form, as handed to xdist workers."""
        return {
            "format": FORMAT,
            "identity": self.identity,
            "vectors": [list(pair) for pair in self.vectors],
            "checks": [check.dump() for check in self.checks],
            "notes": self.notes,
            "error": self.error,
        }

    @classmethod
    def load(cls, data: JsonValue) -> Plan:
        """The plan `dump` wrote; `ValueError`, in one line naming what is
        wrong, for anything else."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            found = data.get("format") if isinstance(data, dict) else data
            raise ValueError(f"not a {FORMAT} plan: its format is {found!r}")
        identity, vectors, checks, notes, error = (
            data.get(name)
            for name in ("identity", "vectors", "checks", "notes", "error")
        )
        if not isinstance(identity, dict):
            raise ValueError("plan member 'identity' is not an object")
        if not isinstance(vectors, list) or not all(
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(part, str) for part in pair)
            for pair in vectors
        ):
            raise ValueError("plan member 'vectors' is not a list of [revision, case]")
        if not isinstance(checks, list):
            raise ValueError("plan member 'checks' is not a list")
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("plan member 'notes' is not a list of texts")
        if error is not None and not isinstance(error, str):
            raise ValueError("plan member 'error' is neither text nor null")
        loaded = []
        for position, check in enumerate(checks):
            try:
                loaded.append(Check.load(check))
            except ValueError as problem:
                raise ValueError(f"plan check {position}: {problem}") from None
        return cls(
            identity=identity,
            vectors=[(str(revision), str(case)) for revision, case in vectors],
            checks=loaded,
            notes=[str(note) for note in notes],
            error=error,
        )


def make_plan(options: Options) -> Plan:
    """Start the implementation, play the scenarios it can, list the vectors.

    Never raises for what the implementation does: a start-up failure or
    options it cannot honour are the plan's `error`.
    """
    try:
        return _make_plan(options)
    except PlanError as error:
        return Plan(error=str(error))


def _make_plan(options: Options) -> Plan:
    from reqfold.conformance.adapters.lifecycle import declared_revisions
    from reqfold.conformance.codec.loading import iter_cases
    from reqfold.conformance.codec.runner import claimed_profiles
    from reqfold.conformance.harness.runner import harness_connector, run_scenarios
    from reqfold.conformance.harness.scenarios import ScenarioError, load_scenarios
    from reqfold.reference.revisions import parse_revision

    try:
        scenarios = load_scenarios()
    except ScenarioError as error:
        raise PlanError(f"the scenarios cannot be loaded: {error}") from None
    if options.scenarios is not None:
        known = {scenario.id for scenario in scenarios}
        unknown = [name for name in options.scenarios if name not in known]
        if unknown:
            from reqfold.conformance.harness.scenario_names import (
                unknown_scenarios,
            )

            raise PlanError(unknown_scenarios("--reqfold-scenario", unknown, known))
        scenarios = [s for s in scenarios if s.id in options.scenarios]
    wanted = (
        None
        if options.revisions is None
        else [parse_revision(name) for name in options.revisions]
    )
    report = run_scenarios(
        harness_connector(options.impl, options.timeout),
        revisions=wanted,
        scenarios=scenarios,
    )
    if report.startup_error is not None:
        raise PlanError(f"the implementation did not start: {report.startup_error}")
    identity = report.implementation
    declared = declared_revisions(identity)
    if wanted is not None:
        missing = [r.value for r in wanted if r not in declared]
        if missing:
            names = ", ".join(r.value for r in declared) or "no revision"
            raise PlanError(
                f"the implementation does not declare {', '.join(missing)}"
                f" (it declares {names})"
            )
    chosen = declared if wanted is None else [r for r in declared if r in wanted]
    capabilities = _capabilities(identity)
    plan = Plan(identity=identity, notes=list(report.skipped))
    if "codec" in capabilities:
        # The verdict covers the profiles the implementation claims
        # (docs/vectors.md, "Profiles"): the others are not collected.
        judged = claimed_profiles(identity)
        cases = list(iter_cases(revisions=chosen))
        plan.vectors = [
            (revision.value, case.id)
            for revision, case in cases
            if case.profile in judged
        ]
        left = len(cases) - len(plan.vectors)
        if left:
            plan.notes.append(
                f"{left} vectors of the strict profile not collected: the"
                " implementation does not claim 'strict' (reqfold vectors"
                " --profile strict runs them)"
            )
    else:
        plan.notes.append(
            "vectors not run: the implementation does not declare 'codec'"
        )
    plan.checks = list(report.results)
    if not plan.vectors and not plan.checks:
        raise PlanError(
            "nothing to check: the options select nothing this implementation has"
            + "".join(f"; {note}" for note in plan.notes)
        )
    return plan


def _capabilities(identity: JsonObject) -> list[Any]:
    capabilities = identity.get("capabilities")
    return capabilities if isinstance(capabilities, list) else []
