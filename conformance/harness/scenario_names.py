"""Saying that a scenario id names no scenario: the near ids, and where
the list is (``reqfold run --list-scenarios``).

``--scenario plain-turn`` (the id is ``plain-turns``) once got "unknown
scenario(s)" and nothing else. Pure: names in, one line out.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from reqfold.conformance.harness.scenarios import Scenario


def unknown_scenarios(option: str, unknown: Sequence[str], known: Iterable[str]) -> str:
    """``OPTION: no scenario 'x' (did you mean 'y'?); ...`` in one line."""
    known = sorted(known)
    said = []
    for name in unknown:
        near = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(map(repr, near))}?)" if near else ""
        said.append(f"{name!r}{hint}")
    return (
        f"{option}: no scenario {', '.join(said)};"
        " `reqfold run --list-scenarios` lists them"
    )


def scenario_listing(scenarios: Iterable[Scenario]) -> list[str]:
    """One line per scenario: its id, its revisions and its title."""
    rows = sorted(scenarios, key=lambda scenario: scenario.id)
    width = max((len(scenario.id) for scenario in rows), default=0)
    return [
        f"{scenario.id:<{width}}  {scenario.title}"
        f" ({', '.join(revision.value for revision in scenario.revisions)})"
        for scenario in rows
    ]
