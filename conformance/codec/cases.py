"""What a codec test vector is: the files' layout, its cases, positive and negative.

The vectors live in ``conformance/vectors/<revision>/<family>.json`` (see
docs/vectors.md): one file per codec method and per revision that
*introduced* the behaviour its cases pin down, each case giving the
method's params and either the exact result or a rejection. This module
names the layout (families, levels, profiles, rejection kinds) and holds
`VectorCase`; `reqfold.conformance.codec.loading` reads and checks the files,
`reqfold.conformance.codec.judging` judges an answer against a case. None of them
needs more than the standard library; the JSON Schema of the file format
(``vectors.schema.json``) is checked by the test suite.

Positive and negative cases. The coverage lint (tests/conformance) wants
every codec rule shown both ways, so the two words are defined here,
exactly:

* A case is **positive** when it expects a result: the implementation must
  accept the input and answer with this value.
* A case is **negative** when it shows what must *not* happen: it expects
  a rejection (any JSON-RPC error with code -32000), or a result that is
  the method's "no" answer: ``codec/equals`` -> ``{"equal": false}``,
  ``codec/diff`` -> ``{"delta": null}``, ``codec/fold`` -> ``{"header":
  null}``, ``codec/record`` -> ``{"event": null}``.

A "no" answer is both positive and negative; a rule is covered both ways
when it has a positive case and a negative case that are not the same
single case (`codec_rule_ids` names the rules that must be).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from reqfold.conformance.json_text.values import values_equal
from reqfold.conformance.rules import Rule
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

VECTORS_DIR: Final = Path(__file__).resolve().parent.parent / "vectors"
"""Where the vector files live, beside this module."""

SCHEMA_PATH: Final = VECTORS_DIR / "vectors.schema.json"
"""The JSON Schema (draft 2020-12) of one vector file."""

SCHEMA_REF: Final = "../vectors.schema.json"
"""The ``$schema`` member every vector file carries."""

FAMILIES: Final[Mapping[str, str]] = {
    "canonical": "codec/canonical",
    "equals": "codec/equals",
    "diff": "codec/diff",
    "apply": "codec/apply",
    "fold": "codec/fold",
    "record": "codec/record",
}
"""Each family (file name) and the adapter method its cases call."""

LEVELS: Final = ("MUST", "SHOULD")

CORE, STRICT = "core", "strict"
PROFILES: Final = (CORE, STRICT)
"""The profiles a case belongs to (docs/vectors.md, "Profiles"): ``core``,
behaviour on what a conforming writer produces, which every implementation
is judged on; ``strict``, rejecting malformed, conflicting or non-JSON
input and reading non-canonical input to ``equals``/``diff``/``apply``/
``fold``, judged when an implementation claims it (the ``strict``
capability of ``initialize``) or when asked to (``--profile strict``)."""

ERROR_KINDS: Final = (
    "malformed-header",
    "malformed-delta",
    "delta-conflict",
    "delta-before-snapshot",
    "malformed-event",
    "not-json-value",
)
"""The informative rejection kinds (``CodecError.kind`` of the reference)."""

CODEC_RULE_PREFIXES: Final = (
    "HDR-",
    "CONFIG-",
    "SYS-",
    "TOOLS-",
    "MSGS-",
    "EQ-",
    "DELTA-",
    "FOLD-",
    "SNAP-",
)
CODEC_RULE_IDS: Final = frozenset(
    {"JSON-1", "JSON-2", "JSON-3", "JSON-5", "HDR-5"}
    | {"WRITER-1", "WRITER-2", "WRITER-3", "WRITER-4", "WRITER-5"}
)
"""Codec rules named one by one: JSON-1..3, the SHOULD rule HDR-5, and the
writer's decision (WRITER-6 is about a whole log, not one decision)."""

_NO_ANSWERS: Final[Mapping[str, JsonObject]] = {
    "codec/equals": {"equal": False},
    "codec/diff": {"delta": None},
    "codec/fold": {"header": None},
    "codec/record": {"event": None},
}


class VectorError(Exception):
    """A vector file breaks the format of docs/vectors.md."""

    def __init__(self, path: Path, message: str, *, case_id: str | None = None):
        self.path = path
        self.case_id = case_id
        where = f"{path}" if case_id is None else f"{path} [{case_id}]"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True, slots=True, kw_only=True)
class VectorCase:
    """One test vector, as written in its file."""

    id: str
    family: str
    method: str
    rules: tuple[str, ...]
    level: str
    profile: str
    revisions: tuple[Revision, ...]
    description: str
    params: JsonObject
    expect: JsonObject
    path: Path

    @property
    def expects_error(self) -> bool:
        """True for a rejection case."""
        return "error" in self.expect

    @property
    def expected_result(self) -> JsonObject:
        """The exact result a positive case expects."""
        if self.expects_error:
            raise ValueError(f"vector {self.id} expects a rejection, not a result")
        result: JsonObject = self.expect["result"]
        return result

    @property
    def expected_error(self) -> JsonObject | None:
        """``{"kind", "rule", "seq"?}`` for a rejection case, else None."""
        error: JsonObject | None = self.expect.get("error")
        return error

    @property
    def expected_rules(self) -> tuple[str, ...]:
        """The rules a rejection may name, any one of them (``expect.error.rule``
        as a tuple); empty for a case that expects a result."""
        error = self.expected_error
        if error is None:
            return ()
        rule = error["rule"]
        return (rule,) if isinstance(rule, str) else tuple(rule)

    @property
    def is_positive(self) -> bool:
        """The case expects a result (module docstring)."""
        return not self.expects_error

    @property
    def is_negative(self) -> bool:
        """The case expects a rejection or a "no" answer (module docstring)."""
        if self.expects_error:
            return True
        no = _NO_ANSWERS.get(self.method)
        return no is not None and values_equal(self.expected_result, no)

    def request_params(self, revision: Revision) -> JsonObject:
        """The params to send when running the case under `revision`."""
        if revision not in self.revisions:
            raise ValueError(f"vector {self.id} does not apply to {revision.value}")
        params: JsonObject = copy.deepcopy(self.params)
        params["revision"] = revision.value
        return params


def codec_rule_ids(rules: Mapping[str, Rule]) -> frozenset[str]:
    """The rules the vectors must cover both ways (module docstring).

    Every MUST rule of the header, equality, delta, fold and snapshot
    areas, the writer's decision WRITER-1..5, and JSON-1..3; plus the two
    SHOULD rules on member order, JSON-3 and HDR-5.
    """
    return frozenset(
        rule_id
        for rule_id, rule in rules.items()
        if (rule.is_must and rule_id.startswith(CODEC_RULE_PREFIXES))
        or rule_id in CODEC_RULE_IDS
    )
