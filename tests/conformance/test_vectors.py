"""The test vectors: file format, layout, rule coverage, and the loader's judging."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reqfold.conformance.adapters.messages import check_codec_result, check_params
from reqfold.conformance.codec.cases import (
    CORE,
    ERROR_KINDS,
    FAMILIES,
    PROFILES,
    SCHEMA_PATH,
    STRICT,
    VECTORS_DIR,
    VectorCase,
    VectorError,
    codec_rule_ids,
)
from reqfold.conformance.codec.judging import Verdict, compare_results, judge_response
from reqfold.conformance.codec.loading import (
    iter_cases,
    load_cases,
    load_file,
    stray_files,
    vector_files,
)
from reqfold.conformance.json_text.values import encode_json, load_json, values_equal
from reqfold.conformance.rules import load_rules
from reqfold.reference.errors import CodecError
from reqfold.reference.header import canonical_header
from reqfold.reference.json_values import JsonValue, json_equal
from reqfold.reference.revisions import Revision

FILES = vector_files()
CASES = load_cases()
MEMBER_ORDER_RULES = {"JSON-3", "HDR-5"}


def schema_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def file_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


# ---------------------------------------------------------------- format


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_there_is_one_file_per_revision_and_family() -> None:
    expected = {(r.value, f) for r in Revision for f in FAMILIES}
    assert {(p.parent.name, p.stem) for p in FILES} == expected


def test_the_vector_directory_holds_only_the_schema_and_vector_files() -> None:
    assert stray_files() == []


@pytest.mark.parametrize("path", FILES, ids=file_id)
def test_every_vector_file_validates_against_the_schema(path: Path) -> None:
    document = load_json(path.read_text(encoding="utf-8"))
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in schema_validator().iter_errors(document)
    ]
    assert errors == []


@pytest.mark.parametrize(
    "mutate",
    [
        pytest.param(
            lambda d: d["cases"][0]["params"].update(revision="x"), id="revision"
        ),
        pytest.param(lambda d: d.update(method="codec/apply"), id="wrong-method"),
        pytest.param(lambda d: d["cases"][0].update(level="MAY"), id="level"),
        pytest.param(lambda d: d["cases"][0].update(id="Diff-X"), id="id-case"),
        pytest.param(lambda d: d["cases"][0].update(revisions=[]), id="no-revisions"),
        pytest.param(
            lambda d: d["cases"][0].update(expect={"result": {"delta": {}}}),
            id="empty-delta",
        ),
        pytest.param(
            lambda d: d["cases"][0].update(
                expect={"error": {"kind": "oops", "rule": "HDR-1"}}
            ),
            id="error-kind",
        ),
        pytest.param(
            lambda d: d["cases"][0].update(
                expect={"error": {"kind": "malformed-header"}}
            ),
            id="error-without-rule",
        ),
        pytest.param(
            lambda d: d["cases"][0].update(
                expect={"error": {"kind": "malformed-header", "rule": ["HDR-1"]}}
            ),
            id="error-rule-array-of-one",
        ),
        pytest.param(
            lambda d: d["cases"][0].update(
                expect={"error": {"kind": "malformed-header", "rule": "hdr-1"}}
            ),
            id="error-rule-not-an-id",
        ),
        pytest.param(lambda d: d["cases"][0].update(extra=1), id="extra-member"),
        pytest.param(lambda d: d["cases"][0].pop("profile"), id="no-profile"),
        pytest.param(lambda d: d["cases"][0].update(profile="full"), id="profile"),
    ],
)
def test_the_schema_rejects_broken_files(mutate: Any) -> None:
    path = VECTORS_DIR / "header-events" / "diff.json"
    document = load_json(path.read_text(encoding="utf-8"))
    mutate(document)
    assert list(schema_validator().iter_errors(document))


def test_case_ids_are_unique_across_files() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for case in CASES:
        where[case.id].append(file_id(case.path))
    assert {i: p for i, p in where.items() if len(p) > 1} == {}


def test_case_ids_are_kebab_case_and_prefixed_by_their_family() -> None:
    for case in CASES:
        assert case.id.startswith(case.family + "-"), case.id
        assert case.id == case.id.lower(), case.id
        assert all(part for part in case.id.split("-")), case.id


def test_there_are_at_least_150_cases() -> None:
    assert len(CASES) >= 150


def test_every_family_has_cases_for_every_revision() -> None:
    runs = {(revision, case.family) for revision, case in iter_cases()}
    assert runs == {(r, f) for r in Revision for f in FAMILIES}


# ---------------------------------------------------------------- rules


def test_every_named_rule_exists_in_the_spec() -> None:
    rules = load_rules()
    unknown = {(case.id, r) for case in CASES for r in case.rules if r not in rules}
    assert unknown == set()


def test_every_case_applies_only_to_revisions_its_rules_hold_in() -> None:
    rules = load_rules()
    wrong = {
        (case.id, rule_id, revision.value)
        for case in CASES
        for rule_id in case.rules
        for revision in case.revisions
        if not rules[rule_id].applies_to(revision)
    }
    assert wrong == set()


def test_the_codec_rules_are_the_header_algebra_and_the_writers_decision() -> None:
    codec = codec_rule_ids(load_rules())
    assert {"HDR-1", "CONFIG-2", "SYS-5", "TOOLS-5", "MSGS-1", "EQ-3"} <= codec
    assert {"DELTA-6", "FOLD-3", "SNAP-1", "WRITER-5", "JSON-1", "JSON-2"} <= codec
    assert {"JSON-3", "HDR-5"} <= codec
    assert not codec & {"WRITER-6", "JSON-4", "LOG-1", "PREFIX-2", "REQ-1"}


def test_every_codec_rule_has_a_positive_and_a_negative_case() -> None:
    positive: dict[str, set[str]] = defaultdict(set)
    negative: dict[str, set[str]] = defaultdict(set)
    for case in CASES:
        for rule_id in case.rules:
            if case.is_positive:
                positive[rule_id].add(case.id)
            if case.is_negative:
                negative[rule_id].add(case.id)
    missing = {
        rule_id: (sorted(positive[rule_id]), sorted(negative[rule_id]))
        for rule_id in sorted(codec_rule_ids(load_rules()))
        if not positive[rule_id]
        or not negative[rule_id]
        or len(positive[rule_id] | negative[rule_id]) < 2
    }
    assert missing == {}


def test_should_cases_are_about_member_order() -> None:
    for case in CASES:
        if case.level == "SHOULD":
            assert MEMBER_ORDER_RULES & set(case.rules), case.id


def test_every_rejection_kind_is_used() -> None:
    used = {case.expect["error"]["kind"] for case in CASES if case.expects_error}
    assert used == set(ERROR_KINDS)


# ---------------------------------------------------------------- positive/negative


def make_case(method: str, expect: dict[str, Any], level: str = "MUST") -> VectorCase:
    family = next(f for f, m in FAMILIES.items() if m == method)
    return VectorCase(
        id=f"{family}-example",
        family=family,
        method=method,
        rules=("EQ-1",),
        level=level,
        profile=CORE,
        revisions=(Revision.HEADER_EVENTS,),
        description="an example",
        params={},
        expect=expect,
        path=VECTORS_DIR / "header-events" / f"{family}.json",
    )


@pytest.mark.parametrize(
    ("method", "expect", "positive", "negative"),
    [
        ("codec/equals", {"result": {"equal": True}}, True, False),
        ("codec/equals", {"result": {"equal": False}}, True, True),
        ("codec/diff", {"result": {"delta": None}}, True, True),
        ("codec/diff", {"result": {"delta": {"config": {"model": "m"}}}}, True, False),
        ("codec/fold", {"result": {"header": None}}, True, True),
        ("codec/record", {"result": {"event": None}}, True, True),
        ("codec/canonical", {"result": {"header": {"config": {}}}}, True, False),
        (
            "codec/apply",
            {"error": {"kind": "delta-conflict", "rule": "EQ-1"}},
            False,
            True,
        ),
    ],
)
def test_positive_and_negative_follow_the_loader_definition(
    method: str, expect: dict[str, Any], positive: bool, negative: bool
) -> None:
    case = make_case(method, expect)
    assert (case.is_positive, case.is_negative) == (positive, negative)


# ---------------------------------------------------------------- comparison


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        ({"a": 1, "b": [True, None]}, {"a": 1, "b": [True, None]}, Verdict.PASS),
        ({"t": 1}, {"t": 1.0}, Verdict.PASS),
        ({"x": [1, {"y": 2}]}, {"x": [1.0, {"y": 2.0}]}, Verdict.PASS),
        ({"t": True}, {"t": 1}, Verdict.FAIL),
        ({"t": 0}, {"t": False}, Verdict.FAIL),
        ({"t": None}, {}, Verdict.FAIL),
        ({"t": "1"}, {"t": 1}, Verdict.FAIL),
        ({"a": 1}, {"a": 1, "b": 2}, Verdict.FAIL),
        ([1, 2], [2, 1], Verdict.FAIL),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, Verdict.WARN),
        ({"h": {"c": {"m": 1, "t": 2}}}, {"h": {"c": {"t": 2, "m": 1}}}, Verdict.WARN),
        ({"a": 1, "b": 2}, {"b": 2, "a": 3}, Verdict.FAIL),
        ({"delta": None}, {"delta": {}}, Verdict.FAIL),
    ],
)
def test_compare_results_checks_value_then_member_order(
    expected: Any, actual: Any, verdict: Verdict
) -> None:
    assert compare_results(expected, actual) is verdict


def test_value_equality_tells_booleans_from_numbers() -> None:
    assert values_equal(1, 1.0)
    assert not values_equal(True, 1)
    assert not values_equal(False, 0)
    assert values_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})
    assert not values_equal({"a": 1, "b": 2}, {"b": 2, "a": 1}, ordered=True)


@pytest.mark.parametrize(
    ("expect", "level", "response", "verdict"),
    [
        (
            {"result": {"equal": False}},
            "MUST",
            {"result": {"equal": False}},
            Verdict.PASS,
        ),
        (
            {"result": {"equal": False}},
            "MUST",
            {"result": {"equal": True}},
            Verdict.FAIL,
        ),
        (
            {"result": {"equal": False}},
            "SHOULD",
            {"result": {"equal": True}},
            Verdict.WARN,
        ),
        (
            {"result": {"equal": False}},
            "MUST",
            {"error": {"code": -32000, "message": "no"}},
            Verdict.FAIL,
        ),
        (
            {"error": {"kind": "malformed-header", "rule": "EQ-1"}},
            "MUST",
            {"error": {"code": -32000, "message": "x", "data": {"rule": "EQ-1"}}},
            Verdict.PASS,
        ),
        (
            {"error": {"kind": "malformed-header", "rule": "EQ-1"}},
            "MUST",
            {"error": {"code": -32602, "message": "invalid params"}},
            Verdict.FAIL,
        ),
        (
            {"error": {"kind": "malformed-header", "rule": "EQ-1"}},
            "MUST",
            {"result": {"equal": True}},
            Verdict.FAIL,
        ),
    ],
)
def test_judge_response_passes_rejections_on_code_and_softens_should_cases(
    expect: dict[str, Any], level: str, response: dict[str, Any], verdict: Verdict
) -> None:
    judgement = judge_response(make_case("codec/equals", expect, level), response)
    assert judgement.verdict is verdict
    assert (judgement.reason == "") == (verdict is Verdict.PASS)


def rejection(rules: tuple[str, ...], error: dict[str, Any]) -> VectorCase:
    """A fold case that expects the rejection `error` (kind malformed-event)."""
    return VectorCase(
        id="fold-example",
        family="fold",
        method="codec/fold",
        rules=rules,
        level="MUST",
        profile=STRICT,
        revisions=(Revision.HEADER_EVENTS,),
        description="an example",
        params={"events": []},
        expect={"error": {"kind": "malformed-event", **error}},
        path=VECTORS_DIR / "header-events" / "fold.json",
    )


def rejected(**data: Any) -> dict[str, Any]:
    return {"error": {"code": -32000, "message": "no", "data": data}}


@pytest.mark.parametrize(
    ("rules", "expected", "response", "verdict", "words"),
    [
        pytest.param(
            ("SNAP-1",),
            {"rule": "SNAP-1", "seq": 3},
            rejected(kind="malformed-event", rule="SNAP-1", seq=3),
            Verdict.PASS,
            "",
            id="right-rule-and-seq",
        ),
        pytest.param(
            ("HDR-3", "SYS-1"),
            {"rule": ["HDR-3", "SYS-1"]},
            rejected(rule="SYS-1"),
            Verdict.PASS,
            "",
            id="any-of-several-rules",
        ),
        pytest.param(
            ("SNAP-1",),
            {"rule": "SNAP-1", "seq": 3},
            rejected(rule="SNAP-1", seq=3.0),
            Verdict.PASS,
            "",
            id="seq-3.0-is-3",
        ),
        pytest.param(
            ("SNAP-1", "HDR-3"),
            {"rule": "SNAP-1"},
            rejected(rule="HDR-3"),
            Verdict.WARN,
            'names rule "HDR-3" where it must name SNAP-1',
            id="another-rule-of-the-case",
        ),
        pytest.param(
            ("HDR-3", "SYS-1"),
            {"rule": ["HDR-3", "SYS-1"]},
            rejected(rule="TOOLS-1"),
            Verdict.WARN,
            "must name one of HDR-3, SYS-1",
            id="none-of-several-rules",
        ),
        pytest.param(
            ("SNAP-1",),
            {"rule": "SNAP-1"},
            {"error": {"code": -32000, "message": "no"}},
            Verdict.WARN,
            "names no rule",
            id="no-data",
        ),
        pytest.param(
            ("SNAP-1",),
            {"rule": "SNAP-1", "seq": 3},
            rejected(rule="SNAP-1"),
            Verdict.WARN,
            "names no seq",
            id="seq-missing",
        ),
        pytest.param(
            ("SNAP-1",),
            {"rule": "SNAP-1", "seq": 3},
            rejected(rule="SNAP-1", seq=True),
            Verdict.WARN,
            "names seq true where it must name seq 3",
            id="seq-true-is-not-1",
        ),
        pytest.param(
            ("FOLD-2",),
            {"rule": "FOLD-2", "seq": 2},
            rejected(rule="FOLD-2", seq=0),
            Verdict.FAIL,
            "names seq 0 where the faulty event is seq 2 (FOLD-2",
            id="fold-2-names-another-seq",
        ),
        pytest.param(
            ("FOLD-2",),
            {"rule": "FOLD-2", "seq": 2},
            rejected(rule="FOLD-2"),
            Verdict.WARN,
            "names no seq",
            id="fold-2-names-no-seq",
        ),
        pytest.param(
            ("FOLD-2",),
            {"rule": "FOLD-2", "seq": 2},
            rejected(rule="FOLD-2", seq="2"),
            Verdict.WARN,
            'names seq "2" where it must name seq 2',
            id="fold-2-seq-as-text-is-not-a-number",
        ),
        pytest.param(
            ("SNAP-1",),
            {"rule": "SNAP-1"},
            {"error": {"code": -32602, "message": "bad", "data": {"rule": "SNAP-1"}}},
            Verdict.FAIL,
            "expected a rejection (code -32000, kind malformed-event, rule SNAP-1)",
            id="not-rejected",
        ),
    ],
)
def test_a_rejection_is_judged_on_its_code_then_its_rule_and_seq(
    rules: tuple[str, ...],
    expected: dict[str, Any],
    response: dict[str, Any],
    verdict: Verdict,
    words: str,
) -> None:
    judgement = judge_response(rejection(rules, expected), response)
    assert judgement.verdict is verdict
    assert words in judgement.reason
    assert (judgement.reason == "") == (verdict is Verdict.PASS)
    assert judgement.reason.startswith("(SHOULD)") == (verdict is Verdict.WARN)


def test_a_kind_other_than_the_vectors_is_a_note_and_changes_no_verdict() -> None:
    case = rejection(("SNAP-1",), {"rule": "SNAP-1"})
    right = judge_response(case, rejected(kind="malformed-header", rule="SNAP-1"))
    assert right.verdict is Verdict.PASS
    assert "kind" in right.note
    assert "informative" in right.note
    wrong = judge_response(case, rejected(kind="malformed-header", rule="X-1"))
    assert wrong.verdict is Verdict.WARN
    assert "kind" in wrong.note


def test_every_rejection_names_a_rule_the_case_demonstrates() -> None:
    for case in CASES:
        if case.expects_error:
            assert case.expected_rules, case.id
            assert set(case.expected_rules) <= set(case.rules), case.id


def test_every_fold_rejection_of_a_faulty_event_names_the_events_seq() -> None:
    """Only a fault in `from` (no event), or an event without a seq, has no
    seq to name."""
    folds = [c for c in CASES if c.expects_error and c.method == "codec/fold"]
    assert folds
    for case in folds:
        events = case.params["events"]
        seqs = bool(events) and all(isinstance(e.get("seq"), int) for e in events)
        assert ("seq" in case.expect["error"]) == seqs, case.id


def test_a_must_case_with_only_member_order_differing_is_a_warning() -> None:
    case = make_case("codec/diff", {"result": {"delta": {"system": 1, "config": 2}}})
    judgement = judge_response(case, {"result": {"delta": {"config": 2, "system": 1}}})
    assert judgement.verdict is Verdict.WARN
    assert "member order" in judgement.reason


# ---------------------------------------------------------------- JSON text


def test_load_json_rejects_repeated_keys_and_non_json_constants() -> None:
    with pytest.raises(ValueError, match="repeats the key"):
        load_json('{"a": 1, "a": 2}')
    with pytest.raises(ValueError, match="NaN"):
        load_json('{"a": NaN}')
    assert load_json('{"a": 1e400}') == {"a": float("inf")}


def test_encode_json_is_compact_ordered_and_spells_infinity_as_a_number() -> None:
    value = {"b": [1, 2.5, {"z": None, "a": "é"}], "a": -float("inf"), "e": {}}
    text = encode_json(value)
    assert text == '{"b":[1,2.5,{"z":null,"a":"é"}],"a":-1e400,"e":{}}'
    assert load_json(text) == value
    with pytest.raises(ValueError, match="NaN"):
        encode_json(float("nan"))


def test_encode_json_escapes_lone_surrogates_in_keys_and_strings() -> None:
    value = {"k\udc00": ["a\ud800b", "ok", 1]}
    text = '{"k\\udc00":["a\\ud800b","ok",1]}'
    assert encode_json(value) == text
    assert encode_json([value, float("inf")]) == f"[{text},1e400]"
    assert load_json(text) == value


def test_encode_json_writes_a_value_nested_deeper_than_the_recursion_limit() -> None:
    depth = sys.getrecursionlimit() * 2
    value: list[Any] = []
    innermost = value
    for _ in range(depth):
        innermost.append([])
        innermost = innermost[0]
    assert encode_json(value) == "[" * (depth + 1) + "]" * (depth + 1)


def test_request_params_add_the_revision_to_a_copy() -> None:
    case = next(c for c in CASES if c.id == "diff-system-mid-prompt-edit")
    params = case.request_params(Revision.SESSION_PREFIX)
    assert params["revision"] == "session-prefix"
    assert "revision" not in case.params
    params["prev"]["system"] = "changed"
    assert case.params["prev"]["system"] != "changed"


def test_iter_cases_can_select_the_declared_revision() -> None:
    pairs = list(iter_cases(revisions=[Revision.HEADER_EVENTS]))
    assert {revision for revision, _ in pairs} == {Revision.HEADER_EVENTS}
    applicable = [c for c in CASES if Revision.HEADER_EVENTS in c.revisions]
    assert [case for _, case in pairs] == applicable


# ---------------------------------------------------------------- loader errors


def write_vectors(root: Path, revision: str, family: str, document: Any) -> Path:
    path = root / revision / f"{family}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def minimal_case(**changes: Any) -> dict[str, Any]:
    case: dict[str, Any] = {
        "id": "equals-a",
        "rules": ["EQ-1"],
        "level": "MUST",
        "profile": "core",
        "revisions": ["header-events"],
        "description": "a",
        "params": {"a": {"config": {"model": "m"}}, "b": {"config": {"model": "m"}}},
        "expect": {"result": {"equal": True}},
    }
    case.update(changes)
    return case


def document(*cases: dict[str, Any], family: str = "equals") -> dict[str, Any]:
    return {
        "$schema": "../vectors.schema.json",
        "family": family,
        "method": FAMILIES[family],
        "cases": list(cases),
    }


def test_the_loader_reads_a_minimal_file(tmp_path: Path) -> None:
    path = write_vectors(tmp_path, "header-events", "equals", document(minimal_case()))
    (case,) = load_file(path)
    assert case.revisions == (Revision.HEADER_EVENTS,)
    assert case.expected_result == {"equal": True}


@pytest.mark.parametrize(
    ("revision", "doc", "message"),
    [
        ("header-events", document(minimal_case(), family="diff"), "file name"),
        (
            "header-events",
            {**document(minimal_case()), "method": "codec/diff"},
            "method",
        ),
        ("nightly", document(minimal_case()), "revision directory"),
        ("header-events", document(minimal_case(id="diff-a")), "must start with"),
        ("header-events", document(minimal_case(revisions=["future"])), "future"),
        (
            "header-events",
            document(minimal_case(revisions=["session-prefix", "header-events"])),
            "revision order",
        ),
        (
            "header-events",
            document(minimal_case(revisions=["request-messages"])),
            "belongs in request-messages/",
        ),
        ("header-events", document(minimal_case(level="MAY")), "level"),
        ("header-events", document(minimal_case(profile="full")), "profile"),
        (
            "header-events",
            document(minimal_case(description="a\nb")),
            "one non-empty line",
        ),
        (
            "header-events",
            document(minimal_case(params={"a": {}, "b": {}, "revision": "x"})),
            "without revision",
        ),
        (
            "header-events",
            document(minimal_case(expect={"error": {"kind": "boom", "rule": "EQ-1"}})),
            "kind",
        ),
        (
            "header-events",
            document(minimal_case(expect={"error": {"kind": "malformed-header"}})),
            "rule must be a rule ID",
        ),
        (
            "header-events",
            document(
                minimal_case(
                    expect={"error": {"kind": "malformed-header", "rule": ["EQ-1"]}}
                )
            ),
            "two or more",
        ),
        (
            "header-events",
            document(
                minimal_case(
                    expect={"error": {"kind": "malformed-header", "rule": "HDR-3"}}
                )
            ),
            "one of the case's rules",
        ),
        (
            "header-events",
            document(
                minimal_case(
                    expect={
                        "error": {"kind": "malformed-header", "rule": "EQ-1", "seq": 0}
                    }
                )
            ),
            "seq of one of the params' events",
        ),
        (
            "header-events",
            document(
                minimal_case(
                    expect={
                        "error": {"kind": "malformed-header", "rule": "EQ-1", "x": 0}
                    }
                )
            ),
            "unknown members",
        ),
        ("header-events", document(minimal_case(extra=True)), "exactly the members"),
    ],
)
def test_the_loader_rejects_files_that_break_the_layout(
    tmp_path: Path, revision: str, doc: Any, message: str
) -> None:
    path = write_vectors(tmp_path, revision, "equals", doc)
    with pytest.raises(VectorError, match=message):
        load_file(path)


def test_the_loader_rejects_repeated_ids_across_files(tmp_path: Path) -> None:
    write_vectors(tmp_path, "header-events", "equals", document(minimal_case()))
    write_vectors(
        tmp_path,
        "request-messages",
        "equals",
        document(minimal_case(revisions=["request-messages"])),
    )
    with pytest.raises(VectorError, match="also used in"):
        load_cases(tmp_path)


def test_the_loader_rejects_repeated_keys_in_a_file(tmp_path: Path) -> None:
    path = tmp_path / "header-events" / "equals.json"
    path.parent.mkdir()
    path.write_text('{"family": "equals", "family": "diff"}', encoding="utf-8")
    with pytest.raises(VectorError, match="repeats the key"):
        load_file(path)


def test_the_loader_rejects_two_cases_with_the_same_method_and_params(
    tmp_path: Path,
) -> None:
    twice = document(minimal_case(), minimal_case(id="equals-b", description="b"))
    write_vectors(tmp_path, "header-events", "equals", twice)
    with pytest.raises(VectorError, match="same method and params as equals-a"):
        load_cases(tmp_path)


def test_the_loader_takes_the_same_params_under_disjoint_revisions(
    tmp_path: Path,
) -> None:
    write_vectors(tmp_path, "header-events", "equals", document(minimal_case()))
    later = minimal_case(id="equals-b", revisions=["request-messages"])
    write_vectors(tmp_path, "request-messages", "equals", document(later))
    assert [case.id for case in load_cases(tmp_path)] == ["equals-a", "equals-b"]


def test_the_loader_gives_the_cases_again_without_parsing_until_a_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reqfold.conformance.codec import loading

    parsed: list[Path] = []
    real = loading.load_file

    def counting(path: Path) -> list[VectorCase]:
        parsed.append(path)
        return real(path)

    monkeypatch.setattr(loading, "load_file", counting)
    write_vectors(tmp_path, "header-events", "equals", document(minimal_case()))
    first = load_cases(tmp_path)
    assert len(parsed) == 1
    assert load_cases(tmp_path) == first
    assert len(parsed) == 1, "the same bytes are not parsed again"
    write_vectors(
        tmp_path, "header-events", "equals", document(minimal_case(description="b"))
    )
    assert [case.description for case in load_cases(tmp_path)] == ["b"]
    later = minimal_case(id="equals-b", revisions=["request-messages"])
    write_vectors(tmp_path, "request-messages", "equals", document(later))
    assert [case.id for case in load_cases(tmp_path)] == ["equals-a", "equals-b"]
    (tmp_path / "request-messages" / "equals.json").unlink()
    assert [case.id for case in load_cases(tmp_path)] == ["equals-a"]
    write_vectors(tmp_path, "header-events", "equals", {"family": "equals"})
    with pytest.raises(VectorError, match=r"\$schema must be"):
        load_cases(tmp_path)


# ---------------------------------------------------------------- profiles


def _headers_read_as_canonical(case: VectorCase) -> list[JsonValue]:
    """The header inputs a conforming writer only ever hands over canonical."""
    params = case.params
    if case.method == "codec/equals":
        return [params["a"], params["b"]]
    if case.method == "codec/diff":
        return [params["prev"], params["next"]]
    if case.method == "codec/apply":
        return [params["prev"]]
    if case.method == "codec/fold":
        headers = [params["from"]] if "from" in params else []
        for event in params["events"]:
            data = event.get("data") if isinstance(event, dict) else None
            if event.get("type") == "request/header" and isinstance(data, dict):
                headers.extend([data["header"]] if "header" in data else [])
        return headers
    return []


def _is_canonical(header: JsonValue, revision: Revision) -> bool:
    """`header` is valid and equal (as a JSON value) to its canonical form.

    Member order is left out on purpose: it is a SHOULD (HDR-5), so a
    conforming writer may hand over another order.
    """
    try:
        canonical = canonical_header(header, revision)  # type: ignore[arg-type]
    except CodecError:
        return False
    return json_equal(canonical, header, ordered=False)


def principled_profile(case: VectorCase) -> str:
    """The profile docs/vectors.md's principle gives `case`."""
    if case.expects_error:
        kind = case.expect["error"]["kind"]
        return CORE if kind == "delta-before-snapshot" else STRICT
    revision = case.revisions[0]
    headers = _headers_read_as_canonical(case)
    return CORE if all(_is_canonical(h, revision) for h in headers) else STRICT


def test_every_case_is_in_the_profile_the_principle_gives() -> None:
    wrong = {
        case.id: f"{case.profile}, principle says {principled_profile(case)}"
        for case in CASES
        if case.profile != principled_profile(case)
    }
    assert wrong == {}


def test_both_profiles_have_cases_in_every_revision() -> None:
    seen = {(revision, case.profile) for case in CASES for revision in case.revisions}
    assert seen == {(r, p) for r in Revision for p in PROFILES}


@pytest.mark.parametrize(
    ("case_id", "profile"),
    [
        ("fold-delta-before-snapshot-rejected", CORE),
        ("equals-empty-system-equals-absent", STRICT),
        ("fold-from-state-canonicalized", STRICT),
    ],
)
def test_the_principle_puts_the_designs_rejection_in_core_and_lenient_reads_in_strict(
    case_id: str, profile: str
) -> None:
    (case,) = [case for case in CASES if case.id == case_id]
    assert principled_profile(case) == profile


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        pytest.param(2**53 + 1, 2**53, Verdict.PASS, id="nearest-double"),
        pytest.param(2**53 + 1, float(2**53), Verdict.PASS, id="as-a-float"),
        pytest.param(2**53 + 3, 2**53 + 4, Verdict.PASS, id="same-double"),
        pytest.param(2**53 + 1, 2**53 + 2, Verdict.FAIL, id="another-double"),
        pytest.param(2**53, 2**53 - 1, Verdict.FAIL, id="exact-below-2-53"),
        pytest.param(10**400, 10**400 + 1, Verdict.FAIL, id="beyond-any-double"),
        pytest.param(2**53 + 1, True, Verdict.FAIL, id="never-a-boolean"),
    ],
)
def test_an_integer_beyond_2_53_is_judged_by_its_nearest_double(
    expected: int, actual: Any, verdict: Verdict
) -> None:
    assert compare_results({"seed": expected}, {"seed": actual}) is verdict


# ---------------------------------------------------------------- method schemas


@pytest.mark.parametrize("method", sorted(FAMILIES.values()))
def test_every_vectors_params_and_expected_result_fit_the_methods_schemas(
    method: str,
) -> None:
    cases = [(r, c) for r, c in iter_cases() if c.method == method]
    assert cases
    for revision, case in cases:
        assert check_params(method, case.request_params(revision)) is None, case.id
        if not case.expects_error:
            found = check_codec_result(method, case.expected_result)
            assert found is None, (case.id, found)


@pytest.mark.parametrize(
    ("method", "result"),
    [
        ("codec/canonical", {"header": {"config": {"model": "m"}, "system": ""}}),
        ("codec/canonical", {"header": {"config": {"model": "m"}, "extra": 1}}),
        ("codec/equals", {"equal": 1}),
        ("codec/diff", {"delta": {}}),
        ("codec/diff", {"delta": {"system": {"keepStart": 0, "keepEnd": 0}}}),
        ("codec/apply", {"header": None}),
        ("codec/fold", {}),
        ("codec/record", {"event": {"type": "request/header", "data": {}}}),
        ("codec/record", {"event": {"type": "request/header-delta", "data": {}}}),
    ],
)
def test_the_result_schemas_refuse_results_of_the_wrong_shape(
    method: str, result: Any
) -> None:
    assert check_codec_result(method, result) is not None


def test_the_params_schemas_refuse_what_the_protocol_answers_with_32602() -> None:
    assert check_params("codec/fold", {"events": {}}) is not None
    assert check_params("codec/record", {"baseline": None, "header": {}}) is not None
    assert check_params("codec/equals", {"a": None, "b": 1, "revision": "r9"})


def test_the_loaders_old_module_still_offers_every_name_the_docs_gave_it() -> None:
    # docs/vectors.md named conformance/codec/corpus.py before the split
    from reqfold.conformance.codec import cases, corpus, judging, loading
    from reqfold.conformance.json_text import values

    for name in corpus.__all__:
        homes = [m for m in (cases, judging, loading, values) if hasattr(m, name)]
        assert homes, name
        assert getattr(corpus, name) is getattr(homes[0], name)
    assert len(corpus.load_cases()) == len(loading.load_cases())
