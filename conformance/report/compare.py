"""Comparing two JSON run reports: what broke, what got fixed, what the cache did.

Checks are matched by id. A check is **newly failing** when its status in
the new report is ``fail``, ``error`` or ``xpass`` and was none of those in
the old one (or it did not exist then); **newly passing** when it passes
now and failed, errored, warned or was an expected failure before. Each
scenario run's cache hit ratio (cached over prompt tokens, summed over its
requests) is compared too; a lower ratio is a regression when both
reports ran the same suite (same digest) and the old run of that scenario
broke nothing (a harness that broke the contract may have sent shorter
prompts, so its fix can lower the ratio): otherwise the numbers are shown
but not judged. A regression is a newly failing
check, a check of the old report missing from the new one (when both ran
the same suite: a run that stopped, was interrupted or lost a part checks
less, which must not read as "no regression"; but a ``request-N`` or
``cache/request-N`` check whose scenario run is there and sent another
number of requests, or a request N with other prompt tokens, cache
relation or judging check, is listed apart as a request no longer sent: a
fixed harness may send other requests than a broken one), a verdict that was
conformant and is not any more (an implementation that did not start
checks nothing, and fails nothing), or a lower hit ratio, or (same
suite) a scenario run with more unexpected cache breaks or more tokens
lost against a pure append than before (docs/cache.md; a report without
those members counts 0). A check's scenario run is the one its
``scenario`` and ``revision`` fields name, so a probe's report (ids with
no ``scenario@revision/`` prefix, its session as the run) compares as a
run's does. Pure: two
validated reports in, a `Comparison` out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from reqfold.reference.json_values import JsonObject

BAD = frozenset({"fail", "error", "xpass"})


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    """One check whose status changed."""

    id: str
    old: str
    """The old status, or ``absent``."""
    new: str
    rules: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheChange:
    """One scenario run's hit ratio in both reports (None: not run there)."""

    key: str
    old: float | None
    new: float | None

    old_lost: int = 0
    new_lost: int = 0
    """Tokens lost against a pure append at unexpected breaks (0 in a report
    made before the member existed)."""
    old_breaks: int = 0
    new_breaks: int = 0
    """Requests that broke the cache unexpectedly."""

    clean_before: bool = True
    """The old run of this scenario had no failing or erroring check: only
    then is its ratio a baseline (a harness that broke the contract may
    have sent shorter prompts, so the fix can lower the ratio)."""

    @property
    def lower(self) -> bool:
        """The ratio dropped."""
        return self.old is not None and self.new is not None and self.new < self.old

    @property
    def judged(self) -> bool:
        """The drop counts as a regression (see `clean_before`)."""
        return self.lower and self.clean_before

    @property
    def worse(self) -> bool:
        """A new unexpected break, or more tokens lost, than before (run in
        both reports)."""
        both = self.old is not None and self.new is not None
        return both and (
            self.new_breaks > self.old_breaks or self.new_lost > self.old_lost
        )


@dataclass(slots=True, kw_only=True)
class Comparison:
    """What changed between two reports (module docstring)."""

    same_suite: bool
    old_status: int = 0
    new_status: int = 0
    newly_failing: list[Change] = field(default_factory=list)
    newly_passing: list[Change] = field(default_factory=list)
    vanished: list[Change] = field(default_factory=list)
    """Checks the old report has (skips aside) and the new one lacks."""
    unsent: list[Change] = field(default_factory=list)
    """``request-N`` and ``cache/request-N`` checks of the old report whose
    request the new run did not send the same way: their scenario run is
    there but sent a different number of requests, or a request N with
    other prompt tokens, cache relation or judging check (a fixed harness
    may send other requests than a broken one). Not a regression: the run's
    own checks judge the requests it sent."""
    cleared: list[Change] = field(default_factory=list)
    """Checks that failed or errored in the old report and are absent from the
    new one while their scenario run's other checks are there: a
    ``<scenario>/run`` error exists only while the run errs, so a fix makes it
    vanish. Not a regression."""
    cache: list[CacheChange] = field(default_factory=list)

    @property
    def verdict_lost(self) -> bool:
        """The old run was conformant (exit 0) and the new one is not."""
        return self.old_status == 0 and self.new_status != 0

    @property
    def regression(self) -> bool:
        """A newly failing check, a lost verdict, or (same suite) a vanished
        check or a lower cache hit ratio."""
        return (
            bool(self.newly_failing)
            or self.verdict_lost
            or (
                self.same_suite
                and (
                    bool(self.vanished)
                    or any(change.judged or change.worse for change in self.cache)
                )
            )
        )


def is_probe_report(report: JsonObject) -> bool:
    """The report is a ``reqfold probe``'s: its ``options.parts`` is
    ``["probe"]`` (docs/reports.md, "A probe's report")."""
    options: Any = report.get("options") or {}
    return bool(options.get("parts") == ["probe"])


def _run_of(check: JsonObject) -> str | None:
    """The scenario run (``scenario@revision``; a probe's session) a check
    belongs to, from its ``scenario`` and ``revision`` fields; None for a
    check of no scenario run (a vector's)."""
    if check.get("scenario") is None or check.get("revision") is None:
        return None
    return f"{check['scenario']}@{check['revision']}"


def _scenario_runs(report: JsonObject) -> dict[str, str]:
    """Each check's id and the scenario run it belongs to (`_run_of`): a
    run's scenario checks and a probe's checks alike."""
    runs = {check["id"]: _run_of(check) for check in report["checks"]}
    return {check_id: run for check_id, run in runs.items() if run is not None}


_REQUEST_CHECK = re.compile(r"request-(\d+)")


def _sent(report: JsonObject) -> dict[str, list[tuple[Any, ...]]]:
    """Per scenario run (``scenario@revision``): each request it sent, as its
    prompt tokens, the fake's relation and the cache check that judged it."""
    return {
        f"{trace['scenario']}@{trace['revision']}": [
            (point["promptTokens"], point["relation"], point.get("check"))
            for point in trace.get("requests", [])
        ]
        for trace in report["scenarios"]
    }


def _request_not_sent(
    check_id: str,
    run: str | None,
    sent_before: dict[str, list[tuple[Any, ...]]],
    sent_now: dict[str, list[tuple[Any, ...]]],
) -> bool:
    """A ``request-N``/``cache/request-N`` check (N: its id's last segment)
    of scenario run `run` that is in the new report but sent another number
    of requests, or a request N that is not the old one (other prompt
    tokens, relation or judging check)."""
    match = _REQUEST_CHECK.fullmatch(check_id.rpartition("/")[2])
    if match is None or run not in sent_now or run not in sent_before:
        return False
    before, now, position = sent_before[run], sent_now[run], int(match.group(1))
    if len(before) != len(now) or position >= len(now):
        return True
    return before[position] != now[position]


def _statuses(report: JsonObject) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {
        check["id"]: (check["status"], tuple(check["rules"]))
        for check in report["checks"]
    }


def _ratios(report: JsonObject) -> dict[str, float | None]:
    return {
        f"{trace['scenario']}@{trace['revision']}": trace["hitRatio"]
        for trace in report["scenarios"]
    }


def _losses(report: JsonObject) -> dict[str, tuple[int, int]]:
    """Per scenario run: (tokens lost, unexpected breaks); 0 when absent."""
    return {
        f"{trace['scenario']}@{trace['revision']}": (
            trace.get("lostTokens", 0),
            trace.get("breaks", 0),
        )
        for trace in report["scenarios"]
    }


def compare_reports(old: JsonObject, new: JsonObject) -> Comparison:
    """Compare two reports that passed `read_report`."""
    before, after = _statuses(old), _statuses(new)
    comparison = Comparison(
        same_suite=old["suite"]["digest"] == new["suite"]["digest"],
        old_status=old["verdict"]["exitStatus"],
        new_status=new["verdict"]["exitStatus"],
    )
    runs_before = _scenario_runs(old)
    runs_now = set(_scenario_runs(new).values())
    sent_before, sent_now = _sent(old), _sent(new)
    for check_id, (status, rules) in before.items():
        if check_id in after or status == "skip":
            continue
        change = Change(id=check_id, old=status, new="absent", rules=rules)
        run = runs_before.get(check_id)
        if status in ("fail", "error") and run in runs_now:
            comparison.cleared.append(change)
        elif _request_not_sent(check_id, run, sent_before, sent_now):
            comparison.unsent.append(change)
        else:
            comparison.vanished.append(change)
    for check_id, (status, rules) in after.items():
        was = before.get(check_id, ("absent", ()))[0]
        if status in BAD and was not in BAD:
            comparison.newly_failing.append(
                Change(id=check_id, old=was, new=status, rules=rules)
            )
        elif status == "pass" and was in BAD | {"warn", "xfail"}:
            comparison.newly_passing.append(
                Change(id=check_id, old=was, new=status, rules=rules)
            )
    old_ratios, new_ratios = _ratios(old), _ratios(new)
    broken = {
        f"{check['scenario']}@{check['revision']}"
        for check in old["checks"]
        if check.get("scenario") is not None
        and check["status"] in ("fail", "error", "xfail")
    }  # the scenario runs (a probe's sessions) that broke the contract
    old_losses, new_losses = _losses(old), _losses(new)
    for key in [*old_ratios, *(k for k in new_ratios if k not in old_ratios)]:
        old_lost, old_breaks = old_losses.get(key, (0, 0))
        new_lost, new_breaks = new_losses.get(key, (0, 0))
        comparison.cache.append(
            CacheChange(
                key=key,
                old=old_ratios.get(key),
                new=new_ratios.get(key),
                old_lost=old_lost,
                new_lost=new_lost,
                old_breaks=old_breaks,
                new_breaks=new_breaks,
                clean_before=key not in broken,
            )
        )
    return comparison


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _identity(report: JsonObject) -> str:
    identity: Any = report["implementation"]
    return f"{identity.get('name', '?')} {identity.get('version', '')}".strip()


def render_comparison(
    old: JsonObject, new: JsonObject, comparison: Comparison
) -> list[str]:
    """The comparison as text lines."""
    lines = [f"old: {_identity(old)} ({old['verdict']['text']})"]
    lines.append(f"new: {_identity(new)} ({new['verdict']['text']})")
    if not comparison.same_suite:
        lines.append(
            "note: the two reports ran different suites (digests differ):"
            " cache ratios are shown, not judged"
        )
    lines.append("")
    lines.append(f"newly failing: {len(comparison.newly_failing)}")
    lines.extend(
        f"  {change.new.upper():<5} {change.id}  [{','.join(change.rules)}]"
        f"  (was {change.old})"
        for change in comparison.newly_failing
    )
    lines.append(f"newly passing: {len(comparison.newly_passing)}")
    lines.extend(
        f"  pass  {change.id}  [{','.join(change.rules)}]  (was {change.old})"
        for change in comparison.newly_passing
    )
    if comparison.cleared:
        lines.append(
            f"gone with their failure: {len(comparison.cleared)}"
            " (failed or errored before; their scenario run's checks are there now)"
        )
        lines.extend(
            f"  {change.old:<5} {change.id}  [{','.join(change.rules)}]"
            for change in comparison.cleared
        )
    if comparison.unsent:
        lines.append(
            f"requests no longer sent: {len(comparison.unsent)}"
            " (their scenario run sent other requests: not judged)"
        )
        lines.extend(
            f"  {change.old:<5} {change.id}  [{','.join(change.rules)}]"
            for change in comparison.unsent[:20]
        )
        if len(comparison.unsent) > 20:
            lines.append(f"  ... and {len(comparison.unsent) - 20} more")
    lines.append(
        f"missing from the new report: {len(comparison.vanished)}"
        + ("" if comparison.same_suite else " (different suites: not judged)")
    )
    lines.extend(
        f"  {change.old:<5} {change.id}  [{','.join(change.rules)}]"
        for change in comparison.vanished[:20]
    )
    if len(comparison.vanished) > 20:
        lines.append(f"  ... and {len(comparison.vanished) - 20} more")
    if comparison.verdict_lost:
        lines.append(
            f"verdict: was conformant (exit 0), now exit {comparison.new_status}"
        )
    changed = [change for change in comparison.cache if change.old != change.new]
    unchanged = len(comparison.cache) - len(changed)
    if comparison.cache and not changed:
        lines.append("")
        runs = (
            "the 1 scenario run" if unchanged == 1 else f"all {unchanged} scenario runs"
        )
        lines.append(f"cache hit ratio: unchanged in {runs}")
    elif changed:
        # only the scenario runs whose ratio moved: the answer stays in view
        lines.append("")
        lines.append(
            "cache hit ratio per scenario (old -> new)"
            + (f"; {unchanged} more unchanged" if unchanged else "")
        )
        for change in changed:
            mark = (
                "  LOWER"
                if change.judged
                else "  lower (the old run broke the contract: not judged)"
                if change.lower
                else ""
            )
            if change.worse:
                mark += (
                    f"  MORE BROKEN: {change.old_breaks} -> {change.new_breaks}"
                    f" break(s), {change.old_lost} -> {change.new_lost} tokens lost"
                )
            lines.append(
                f"  {change.key:<60} {_ratio(change.old):>7} -> {_ratio(change.new):>7}"
                f"{mark}"
            )
    lines.append("")
    lines.append("Regression: " + ("yes" if comparison.regression else "no"))
    return lines
