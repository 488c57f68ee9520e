"""The differential properties generate the inputs of the profiles the
verdict covers: ``core`` only, unless the implementation is judged on
``strict`` (it claims it, or ``--profile strict``).

A codec that compares headers as it gets them, as the original's does (it
only ever compares its own canonical headers), answers ``equal: false``
for ``{config}`` against ``{config, system: ""}``: non-canonical input to
``equals`` is a ``strict`` vector, so it must pass the ``core`` properties
and fail only when judged on ``strict``.
"""

from __future__ import annotations

import pytest

from reqfold.conformance.adapters.inprocess import DirectConnection
from reqfold.conformance.codec.properties import counterexample, run_properties
from reqfold.conformance.codec.property_table import PROPERTIES
from reqfold.conformance.outcomes import Outcome
from reqfold.reference.header import header_equals
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

EQUALS = [prop for prop in PROPERTIES if prop.family == "equals"]


class ComparesAsGiven(DirectConnection):
    """The reference, but ``equals`` takes two spellings of one header as
    different: an absent and an empty field are not the same to it."""

    def __init__(self, *, claims_strict: bool) -> None:
        super().__init__()
        self.claims_strict = claims_strict

    def initialize(self) -> JsonObject:
        identity = super().initialize()
        capabilities = [c for c in identity["capabilities"] if c != "strict"]
        identity["capabilities"] = capabilities + (
            ["strict"] if self.claims_strict else []
        )
        return identity

    def request(self, method: str, params: JsonObject) -> JsonObject:
        if method != "codec/equals":
            return super().request(method, params)
        a, b = params["a"], params["b"]
        revision = Revision(params["revision"])
        same_members = set(a) == set(b)
        return {"result": {"equal": same_members and header_equals(a, b, revision)}}


@pytest.mark.spec("EQ-1", "HDR-4")
def test_a_codec_comparing_headers_as_given_passes_the_core_properties() -> None:
    results = run_properties(
        lambda: ComparesAsGiven(claims_strict=False), properties=EQUALS
    )
    assert {result.outcome for result in results} == {Outcome.PASS}


@pytest.mark.spec("EQ-1", "HDR-4")
def test_the_same_codec_fails_equals_once_it_claims_strict() -> None:
    results = run_properties(
        lambda: ComparesAsGiven(claims_strict=True),
        [Revision.SESSION_PREFIX],
        properties=EQUALS,
    )
    assert [result.outcome for result in results] == [Outcome.FAIL]
    assert counterexample(results[0]) is not None


@pytest.mark.spec("EQ-1", "HDR-4")
def test_profile_strict_generates_strict_inputs_for_a_codec_that_claims_only_core() -> (
    None
):
    results = run_properties(
        lambda: ComparesAsGiven(claims_strict=False),
        [Revision.SESSION_PREFIX],
        properties=EQUALS,
        profile="strict",
    )
    assert [result.outcome for result in results] == [Outcome.FAIL]
