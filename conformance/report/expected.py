"""Expected failures: checks a harness author knows fail, each with a reason.

The file (``--expected-failures F``) is a JSON object keyed by check id,
each entry an object with a non-empty ``reason``::

    {
      "session-prefix/diff-tools-remove-1": {"reason": "issue 41: tools diff"},
      "plain-turns@session-prefix/cache/request-2": {"reason": "known drift"}
    }

A listed check that fails (or warns) is ``xfail`` and breaks nothing; one
that passes is ``xpass``: the entry is stale and the run fails. An id must
name a check the suite has: a vector case under a revision it applies to
(``REVISION/CASE``), a property (``property/FAMILY/REVISION``), or a
check of a scenario under one of its revisions (``SCENARIO@REVISION/...``);
`unknown_ids` finds the others before a run, `unseen_ids` after it those
whose part, scenario and revision ran but produced no such check. Pure:
text and names in, entries or complaints out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.codec.property_table import PROPERTIES
from reqfold.conformance.harness.results import BROKEN_RUN
from reqfold.conformance.harness.scenarios import Scenario
from reqfold.conformance.report.refusing_json import strict_json_loads


class ExpectedFailuresError(ValueError):
    """The expected-failures file cannot be used (the message says why)."""


def parse_expected(text: str, *, name: str = "expected failures") -> dict[str, str]:
    """The entries of an expected-failures file: check id -> reason."""
    try:
        raw = strict_json_loads(text)
    except ValueError as error:
        raise ExpectedFailuresError(f"{name} is not JSON: {error}") from None
    if not isinstance(raw, dict):
        raise ExpectedFailuresError(
            f"{name} must be a JSON object keyed by check id, each entry"
            ' {"reason": "..."}'
        )
    entries: dict[str, str] = {}
    for check_id, entry in raw.items():
        reason = entry.get("reason") if isinstance(entry, dict) else None
        if not isinstance(reason, str) or not reason.strip():
            raise ExpectedFailuresError(
                f"{name}: the entry for {check_id!r} must be an object with a"
                ' non-empty "reason" string'
            )
        extra = sorted(set(entry) - {"reason"})
        if extra:
            raise ExpectedFailuresError(
                f"{name}: the entry for {check_id!r} has unknown member(s):"
                f" {', '.join(extra)}"
            )
        entries[check_id] = reason.strip()
    return entries


def unknown_ids(
    ids: Iterable[str], cases: Iterable[VectorCase], scenarios: Iterable[Scenario]
) -> list[str]:
    """The ids that cannot name a check of this suite (module docstring)."""
    vectors = {
        f"{revision.value}/{case.id}" for case in cases for revision in case.revisions
    }
    properties = {
        prop.id(revision) for prop in PROPERTIES for revision in prop.revisions
    }
    runs = {
        f"{scenario.id}@{revision.value}"
        for scenario in scenarios
        for revision in scenario.revisions
    }
    unknown = []
    for check_id in ids:
        run, slash, rest = check_id.partition("/")
        if check_id in vectors or check_id in properties:
            continue
        if "@" in run and run in runs and slash and rest:
            continue
        unknown.append(check_id)
    return unknown


def unseen_ids(
    expected: Mapping[str, str],
    seen: Iterable[str],
    played: Iterable[str],
    ran_parts: Iterable[str],
    revisions: Iterable[str],
) -> list[str]:
    """Entries this run could have produced and did not.

    `played` are the ``scenario@revision`` runs played, `ran_parts` the
    parts that ran, `revisions` the revisions judged: an entry outside
    them was simply not run this time; inside them, no such check exists.
    A run the implementation broke (its ``.../run`` error is among `seen`)
    did not play to the end and may lack any check, so none of its entries
    is unseen.
    """
    seen_ids = set(seen)
    broken = {
        run
        for run, _, check in (check_id.partition("/") for check_id in seen_ids)
        if check == BROKEN_RUN and "@" in run
    }
    runs = set(played) - broken
    parts, judged = set(ran_parts), set(revisions)
    unseen = []
    for check_id in expected:
        if check_id in seen_ids:
            continue
        run, _, _ = check_id.partition("/")
        if "@" in run:
            if run in runs:
                unseen.append(check_id)
        elif check_id.startswith("property/"):
            if "properties" in parts and check_id.rsplit("/", 1)[1] in judged:
                unseen.append(check_id)
        elif "vectors" in parts and run in judged:
            unseen.append(check_id)
    return unseen
