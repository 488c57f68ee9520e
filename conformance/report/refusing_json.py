"""Reading the JSON files the reports side takes (reports, expected failures),
refusing a file at its first problem (hence the name).

Stricter than `json.loads`: ``NaN`` and ``Infinity`` are not JSON values,
and a member given twice would be read as its last value, so both are
refused with a ValueError saying which; so is nesting too deep for the
parser (a ValueError, never a RecursionError escaping to the caller).

One of four strict JSON readers, each kept for a real difference: this one
refuses a file at its first problem, in words `reqfold compare` prints;
`reqfold.conformance.check.recording_json` reads a log on, recording every
JSON-1 problem so the checker can name each; `reqfold.fakes.provider_json`
answers a request body as a provider would (and the fakes import nothing of
the suite). `reqfold.reference.json_values.parse_json` refuses the same two
things as this one, but it is the reference harness's reader of its log and
its protocol lines: its words name the rule broken ("(JSON-1)", "not a JSON
number"), which would be wrong of a report file, and it lets a
RecursionError through for its callers to word (`reqfold.reference.shells.
adapter` answers it as a JSON-RPC parse error), where a report file too
deep must be one line of `reqfold compare`'s. Sharing it would mean
rewording either the reference's errors or the reports'.
"""

from __future__ import annotations

import json


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _unique_members(pairs: list[tuple[str, object]]) -> dict[str, object]:
    members: dict[str, object] = {}
    for key, value in pairs:
        if key in members:
            raise ValueError(f"the member {key!r} appears twice")
        members[key] = value
    return members


def strict_json_loads(text: str) -> object:
    """JSON as the spec means it: no ``NaN``/``Infinity``, no member given
    twice (ValueError says which); a file a person wrote or a run wrote
    must not be read differently from what it says."""
    try:
        return json.loads(
            text, parse_constant=_no_constant, object_pairs_hook=_unique_members
        )
    except RecursionError:
        raise ValueError("nested too deeply for this reader") from None
