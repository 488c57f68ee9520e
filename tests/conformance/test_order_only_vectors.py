"""Vectors for differences in order only: a codec that compares a list as a
set (``config.stop``, a prefix, a tool schema's ``required``) fails one.

Before these vectors, a codec comparing ``config.stop`` as a set passed
every vector: none held two stop lists differing only in order.
"""

from __future__ import annotations

from typing import Any

import pytest

from reqfold.conformance.adapters.inprocess import DirectConnection
from reqfold.conformance.codec.loading import load_cases
from reqfold.conformance.codec.runner import run_vectors
from reqfold.conformance.outcomes import Outcome
from reqfold.reference.json_values import JsonObject

ORDER_ONLY = {
    "equals-stop-lists-differing-only-in-order-are-unequal",
    "equals-prefix-messages-in-another-order-are-unequal",
    "equals-tool-schema-required-in-another-order-is-unequal",
    "diff-stop-list-reordered-is-a-config-delta",
}


def as_sets(value: Any) -> Any:
    """`value` with every list of strings sorted, and every list's items too."""
    if isinstance(value, dict):
        return {key: as_sets(item) for key, item in value.items()}
    if isinstance(value, list):
        items = [as_sets(item) for item in value]
        return sorted(items, key=repr)
    return value


class ComparesListsAsSets(DirectConnection):
    """The reference, but ``equals`` and ``diff`` ignore the order of lists."""

    def request(self, method: str, params: JsonObject) -> JsonObject:
        if method == "codec/equals":
            params = {**params, "a": as_sets(params["a"]), "b": as_sets(params["b"])}
        elif method == "codec/diff":
            same = as_sets(params["prev"]) == as_sets(params["next"])
            if same:
                return {"result": {"delta": None}}
        return super().request(method, params)


def order_only_cases() -> list[Any]:
    return [
        (revision, case)
        for case in load_cases()
        if case.id in ORDER_ONLY
        for revision in case.revisions
    ]


def test_every_order_only_vector_exists_and_the_reference_passes_it() -> None:
    selected = order_only_cases()
    assert {case.id for _, case in selected} == ORDER_ONLY
    results = run_vectors(DirectConnection, cases=selected).results
    assert {result.outcome for result in results} == {Outcome.PASS}


@pytest.mark.spec("EQ-2", "JSON-2")
def test_a_codec_comparing_lists_as_sets_fails_every_order_only_vector() -> None:
    results = run_vectors(ComparesListsAsSets, cases=order_only_cases()).results
    failed = {result.name for result in results if result.outcome is Outcome.FAIL}
    assert failed == ORDER_ONLY
