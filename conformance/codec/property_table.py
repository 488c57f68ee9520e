"""The differential properties: what each generates and which rules it shows.

One `CodecProperty` per codec method (`PROPERTIES`), each a hypothesis
strategy of the params a conforming writer's inputs give that method
(`reqfold.conformance.strategies`: valid headers, canonical pairs that differ by a
harness's edits, deltas `diff` yields, logs the writer wrote) and the MUST
rules an answer to them demonstrates. Adding a property, or a rule to one,
happens here; `reqfold.conformance.codec.properties` runs them against an
implementation with the reference as oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from hypothesis import strategies as st

from reqfold.conformance.codec.cases import FAMILIES
from reqfold.conformance.rules import load_rules
from reqfold.conformance.strategies import (
    core_headers,
    header_logs,
    header_pairs,
    writer_inputs,
)
from reqfold.reference.header import diff_header, fold_request_header
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import ALL_REVISIONS, Revision

MEMBER_ORDER_RULES: Final = ("JSON-3",)
"""The SHOULD rule every property also demonstrates: member order."""

_FLAG = st.booleans()
_CUT = st.integers(0, 63)


def _canonical_params(revision: Revision) -> st.SearchStrategy[JsonObject]:
    return core_headers(revision).map(lambda header: {"header": header})


def _equals_params(revision: Revision) -> st.SearchStrategy[JsonObject]:
    return header_pairs(revision, canonical=True).map(
        lambda pair: {"a": pair[0], "b": pair[1]}
    )


def _equals_strict_params(revision: Revision) -> st.SearchStrategy[JsonObject]:
    """Pairs in any spelling (``system: ""``, ``tools: []``): non-canonical
    headers handed to ``equals`` are the ``strict`` profile's inputs."""
    return header_pairs(revision).map(lambda pair: {"a": pair[0], "b": pair[1]})


def _diff_params(revision: Revision) -> st.SearchStrategy[JsonObject]:
    return header_pairs(revision, canonical=True).map(
        lambda pair: {"prev": pair[0], "next": pair[1]}
    )


def _apply_params(revision: Revision) -> st.SearchStrategy[JsonObject]:
    return header_pairs(revision, canonical=True, differing=True).map(
        lambda pair: {"prev": pair[0], "delta": diff_header(*pair, revision)}
    )


@st.composite
def _fold_params(draw: st.DrawFn, revision: Revision) -> JsonObject:
    events = draw(header_logs(revision))
    if draw(_FLAG):  # FOLD-3: the second part, from the first's result
        cut = draw(_CUT) % (len(events) + 1)
        state = fold_request_header(events[:cut], None, revision)
        if state is not None:
            return {"events": events[cut:], "from": state}
    return {"events": events}


def _record_params(revision: Revision) -> st.SearchStrategy[JsonObject]:
    return writer_inputs(revision).map(
        lambda inputs: {
            "baseline": inputs[0],
            "loggedThisInstance": inputs[1],
            "header": inputs[2],
        }
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CodecProperty:
    """One generated test of one codec method, under each of its revisions.

    `rules` are the MUST rules the property demonstrates (those that do
    not hold in a revision are left out there); every property also
    demonstrates `MEMBER_ORDER_RULES` at SHOULD level.
    """

    family: str
    rules: tuple[str, ...]
    description: str
    params: Callable[[Revision], st.SearchStrategy[JsonObject]]
    """The inputs of the ``core`` profile: what a conforming writer produces."""
    revisions: tuple[Revision, ...] = ALL_REVISIONS
    strict_params: Callable[[Revision], st.SearchStrategy[JsonObject]] | None = None
    """The inputs when the implementation is judged on ``strict`` too (it
    claims it, or ``--profile strict``), where they differ from `params`."""

    def inputs(
        self, revision: Revision, *, strict: bool
    ) -> st.SearchStrategy[JsonObject]:
        """What the property generates under `revision`: core inputs only,
        unless the implementation is judged on ``strict`` (docs/vectors.md,
        "Profiles": a faithful port of the original passes ``core``)."""
        if strict and self.strict_params is not None:
            return self.strict_params(revision)
        return self.params(revision)

    @property
    def method(self) -> str:
        """The adapter method the property calls."""
        return FAMILIES[self.family]

    def id(self, revision: Revision) -> str:
        """The stable id of the property under `revision`."""
        return f"property/{self.family}/{revision.value}"

    def must_rules(self, revision: Revision) -> tuple[str, ...]:
        """The MUST rules of the property that hold in `revision`."""
        rules = load_rules()
        return tuple(r for r in self.rules if rules[r].applies_to(revision))

    def rules_for(self, revision: Revision) -> tuple[str, ...]:
        """Every rule the property demonstrates under `revision`."""
        return self.must_rules(revision) + MEMBER_ORDER_RULES


PROPERTIES: Final[tuple[CodecProperty, ...]] = (
    CodecProperty(
        family="canonical",
        rules=("HDR-4", "HDR-5", "CONFIG-2", "MSGS-1", "JSON-2"),
        description="valid headers, canonical or not, get the canonical form",
        params=_canonical_params,
    ),
    CodecProperty(
        family="equals",
        rules=("EQ-1", "EQ-2", "EQ-3", "HDR-4", "JSON-2"),
        description="headers and their edits or respellings compare as the spec"
        ' says (respellings such as system: "" only when judged on strict)',
        params=_equals_params,
        strict_params=_equals_strict_params,
    ),
    CodecProperty(
        family="diff",
        rules=(
            "DELTA-2",
            "SYS-3",
            "TOOLS-3",
            "DELTA-4",
            "DELTA-5",
            "EQ-2",
            "EQ-3",
            "WRITER-3",
        ),
        description="canonical headers and their edits give the spec's delta",
        params=_diff_params,
    ),
    CodecProperty(
        family="apply",
        rules=("DELTA-3", "SYS-4", "TOOLS-4", "DELTA-4", "DELTA-5"),
        description="a delta diff yields applies to its previous header",
        params=_apply_params,
    ),
    CodecProperty(
        family="fold",
        rules=("FOLD-1", "FOLD-3", "SNAP-1", "DELTA-3"),
        description="a log the writer wrote folds, at once or from a folded state",
        params=_fold_params,
    ),
    CodecProperty(
        family="record",
        rules=("WRITER-1", "WRITER-2", "WRITER-3", "WRITER-4", "WRITER-5", "DELTA-6"),
        description="the writer's decision for a baseline and a request header",
        params=_record_params,
    ),
)
"""One property per codec method, in the order the vectors list the families."""
