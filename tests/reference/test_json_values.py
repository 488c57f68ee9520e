"""JSON values: what is one, how two compare, how they copy and serialize.

The last tests hold the judge's comparison (conformance/json_text/judge_equal.py)
and the reference's `json_equal` to each other on generated values, so a
defect in either shows up as a disagreement.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st
from rejections import rejects

from reqfold.conformance.json_text.judge_equal import same_json
from reqfold.reference.errors import NotJsonValue
from reqfold.reference.json_values import (
    _plainly_json,
    _walk_json,
    canonical_json,
    check_json_value,
    copy_json,
    has_lone_surrogate,
    is_integer,
    json_equal,
    parse_json,
)

NAN = float("nan")
VALID = ["x", None, True, False, 1, 1.5, [], {}, [1], {"a": 1}]


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize("valid", VALID, ids=repr)
def test_an_invalid_value_is_found_after_any_valid_sibling(valid: object) -> None:
    # The walk takes the last element first: `valid` is checked before NaN.
    with rejects(NotJsonValue, "JSON-1"):
        check_json_value([NAN, valid])
    with rejects(NotJsonValue, "JSON-1"):
        check_json_value({"bad": NAN, "ok": valid})
    with rejects(NotJsonValue, "JSON-1"):
        check_json_value([[NAN], valid])


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    "value",
    [
        pytest.param(float("inf"), id="infinity"),
        pytest.param(float("-inf"), id="minus-infinity"),
        pytest.param((1,), id="tuple"),
        pytest.param({1: "a"}, id="int-key"),
        pytest.param({"a": {None: 1}}, id="nested-null-key"),
        pytest.param(object(), id="object"),
        pytest.param("\udc80", id="lone-surrogate"),
        pytest.param({"\ud800": 1}, id="lone-surrogate-key"),
        pytest.param(["ok", ["\udfff"]], id="nested-lone-surrogate"),
    ],
)
def test_values_that_are_not_json_values_are_rejected(value: object) -> None:
    with rejects(NotJsonValue, "JSON-1"):
        check_json_value(value)


@pytest.mark.spec("JSON-1")
def test_a_cycle_is_rejected_but_a_value_shared_twice_is_not() -> None:
    shared: list[Any] = [1]
    check_json_value([shared, shared, {"a": shared, "b": shared}])
    check_json_value({"a": [shared], "b": [[shared]]})
    cyclic: list[Any] = []
    cyclic.append([cyclic])
    with rejects(NotJsonValue, "JSON-1"):
        check_json_value({"x": cyclic})


class Text(str):
    """A str subclass: a JSON value, but not a plain one."""


class Number(int):
    """An int subclass: a JSON value, but not a plain one."""


ANY_LEAVES = st.sampled_from(
    [
        *("", "ok", "é😀", 0, -(2**80), 1.5, -0.0, True, None, [], {}),
        *("a\ud800", "\udc00", NAN, float("inf"), float("-inf"), (1,), object()),
        *(Text("t"), Number(3), {1: "a"}, {None: 1}, {"\ud800": 1}, {Text("k"): 1}),
    ]
)
"""Leaves of any kind: JSON values, plain or not, and values that are not."""

ANY_VALUES = st.recursive(
    ANY_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=2).map(tuple)
        | st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=8,
)


@pytest.mark.spec("JSON-1")
@settings(max_examples=50)
@given(ANY_VALUES)
def test_a_value_the_shortcut_accepts_is_one_the_walk_accepts(value: Any) -> None:
    if _plainly_json(value, 0):
        _walk_json(value, "value", None)


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    "odd",
    ["a\ud800", NAN, float("inf"), (1,), object(), Text("t"), Number(3)],
    ids=[
        "lone-surrogate",
        "nan",
        "infinity",
        "tuple",
        "object",
        "str-kind",
        "int-kind",
    ],
)
@pytest.mark.parametrize(
    "where",
    [
        lambda odd: odd,
        lambda odd: ["ok", [odd]],
        lambda odd: {"a": 1, "b": {"c": odd}},
        lambda odd: {"a": [1, {odd: 1}]},
    ],
    ids=["alone", "in-a-list", "in-an-object", "as-a-key"],
)
def test_a_value_with_a_part_of_another_kind_is_not_plain(
    odd: Any, where: Callable[[Any], Any]
) -> None:
    """Not a JSON value, or a subclass: the walk decides."""
    assert not _plainly_json(where(odd), 0)


def deeply(depth: int) -> Any:
    value: Any = "leaf"
    for at in range(depth):
        value = [value] if at % 2 else {"x": value}
    return value


@pytest.mark.spec("JSON-1")
def test_a_cycle_or_a_value_past_the_shortcuts_depth_is_left_to_the_walk() -> None:
    cyclic: dict[str, Any] = {}
    cyclic["self"] = [cyclic]
    selfish: dict[str, Any] = {}
    selfish["self"] = selfish  # dicts only: the dict branch bounds its depth
    looped: list[Any] = []
    looped.append(looped)
    for cycle in (cyclic, selfish, looped):
        assert not _plainly_json(cycle, 0)
        with pytest.raises(NotJsonValue, match="cycle"):
            check_json_value(cycle)
    dicts: Any = "leaf"
    for _ in range(3000):
        dicts = {"x": dicts}
    for deep in (deeply(200), dicts):
        assert not _plainly_json(deep, 0)
        check_json_value(deep)
    assert _plainly_json(deeply(60), 0)


@pytest.mark.spec("JSON-1")
def test_a_caller_near_the_recursion_limit_still_gets_its_value_judged() -> None:
    # the shortcut recurses; a value it cannot finish is left to the walk
    def within(frames_left: int) -> None:
        if frames_left > 30:
            within(frames_left - 1)
        else:
            check_json_value(deeply(60))
            with pytest.raises(NotJsonValue):
                check_json_value({"deep": deeply(60), "nan": NAN})

    within(sys.getrecursionlimit() - len(inspect.stack()) - 5)


@pytest.mark.spec("JSON-1")
def test_every_kind_of_json_value_is_accepted() -> None:
    check_json_value(
        {"s": "é😀", "n": None, "t": True, "i": -(2**80), "f": -0.0, "l": [[], {}]}
    )


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    ("text", "lone"),
    [("", False), ("plain", False), ("😀", False), ("a\ud800", True), ("\udfff", True)],
)
def test_a_lone_surrogate_is_told_from_a_pair(text: str, lone: bool) -> None:
    assert has_lone_surrogate(text) is lone


@pytest.mark.spec("JSON-5")
@pytest.mark.parametrize(
    ("value", "integer"),
    [
        (1, True),
        (0, True),
        (-3.0, True),
        (2.0**70, True),
        (1.5, False),
        (True, False),
        (False, False),
        ("1", False),
        (None, False),
        (float("inf"), False),
    ],
    ids=repr,
)
def test_an_integer_is_any_number_without_a_fraction_but_not_a_boolean(
    value: object, integer: bool
) -> None:
    assert is_integer(value) is integer


EQUALITIES = [
    (1, 1.0, True),
    (-0.0, 0, True),
    (2**53 + 1, 2.0**53, False),
    (10**20, 1e20, True),
    (True, 1, False),
    (1, True, False),
    (False, 0, False),
    (0, False, False),
    (True, True, True),
    (False, True, False),
    (None, None, True),
    (None, 0, False),
    (0, None, False),
    (None, "", False),
    ("", None, False),
    (None, [], False),
    ({}, None, False),
    ([], {}, False),
    ({}, [], False),
    ("1", 1, False),
    (1, "1", False),
    ("a", "a", True),
    ("a", "b", False),
    ([1, 2], [1, 2], True),
    ([1, 2], [2, 1], False),
    ([1], [1, 1], False),
    ([[1]], [[True]], False),
    ({"a": 1}, {"a": 1.0}, True),
    ({"a": 1}, {"b": 1}, False),
    ({"a": 1}, {"a": 1, "b": 2}, False),
    ({"a": None}, {}, False),
    ({"a": [None]}, {"a": [0]}, False),
]


@pytest.mark.spec("JSON-2")
@pytest.mark.parametrize(("a", "b", "equal"), EQUALITIES, ids=repr)
def test_json_values_compare_by_value(a: object, b: object, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(a, b, ordered=False) is equal
    assert same_json(a, b) is equal
    assert same_json(a, b, ordered=False) is equal


@pytest.mark.spec("JSON-2", "JSON-3")
def test_member_order_counts_only_when_ordered() -> None:
    a = {"x": 1, "y": {"p": 1, "q": 2}}
    b = {"y": {"q": 2, "p": 1}, "x": 1}
    c = {"x": 1, "y": {"q": 2, "p": 1}}
    for equal in (json_equal, same_json):
        assert not equal(a, b)
        assert not equal(a, c)
        assert equal(a, b, ordered=False)
        assert equal(a, c, ordered=False)
        assert not equal({"x": 1, "y": 2}, {"x": 1, "z": 2}, ordered=False)


@pytest.mark.spec("JSON-2")
def test_comparison_handles_any_depth() -> None:
    deep: list[Any] = []
    for _ in range(50_000):
        deep = [deep]
    other: list[Any] = []
    for _ in range(50_000):
        other = [other]
    assert json_equal(deep, other)
    assert same_json(deep, other)
    assert not same_json(deep, [other])


@pytest.mark.spec("JSON-4")
def test_canonical_text_is_compact_in_member_order_and_keeps_non_ascii() -> None:
    assert canonical_json({"b": [1, 2.5], "a": "é"}) == '{"b":[1,2.5],"a":"é"}'
    with pytest.raises(ValueError) as caught:  # noqa: PT011 (the kind, not the words)
        canonical_json({"x": NAN})
    assert type(caught.value) is ValueError


def test_a_copy_is_equal_in_member_order_and_shares_nothing_mutable() -> None:
    value = {"b": [1, {"c": [2, [3]], "d": {}}], "a": "s", "e": None}
    copied = copy_json(value)
    assert canonical_json(copied) == canonical_json(value)
    copied["b"][1]["c"][1].append(4)
    copied["b"][1]["d"]["x"] = 1
    copied["b"].append(5)
    assert value == {"b": [1, {"c": [2, [3]], "d": {}}], "a": "s", "e": None}
    assert copy_json([[1], 2]) == [[1], 2]
    assert copy_json(7) == 7


def test_a_copy_handles_any_depth() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(50_000):
        node["x"] = {}
        node = node["x"]
    copied = copy_json(deep)
    assert copied is not deep
    assert json_equal(copied, deep)


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    "text",
    ['{"a":1,"a":2}', "[NaN]", "-Infinity", '{"x":Infinity}'],
    ids=["repeated-key", "nan", "minus-infinity", "infinity"],
)
def test_parsing_refuses_repeated_keys_and_non_numbers(text: str) -> None:
    with pytest.raises(ValueError) as caught:  # noqa: PT011 (the kind, not the words)
        parse_json(text)
    assert type(caught.value) is ValueError


@pytest.mark.spec("JSON-1")
def test_parsing_keeps_member_order_and_reads_a_huge_number_as_infinite() -> None:
    assert list(parse_json('{"b":1,"a":{"d":2,"c":3}}')) == ["b", "a"]
    assert parse_json("[1e400]") == [float("inf")]
    assert parse_json('{"a":1,"b":{"a":2}}') == {"a": 1, "b": {"a": 2}}


# ---------------------------------------------------------------- the judge agrees

LOOKALIKES: list[Any] = [True, False, 1, 0, 1.0, -0.0, None, "", "1", [], {}, [None]]
"""Values JSON-2 tells apart although a careless comparison might not."""

scalars = (
    st.sampled_from(LOOKALIKES)
    | st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.sampled_from([0, 1, -1, 2**53, 2**53 + 1, 0.0, -0.0, 1.0, 2.0**53, 1e20])
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=4)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.spec("JSON-1")
@settings(max_examples=25)
@given(json_values)
def test_a_json_value_of_the_built_in_types_takes_the_shortcut(value: Any) -> None:
    assert _plainly_json(value, 0)


@st.composite
def respellings(draw: st.DrawFn, value: Any) -> Any:
    """`value` respelt: numbers as int or float, members reordered, and now
    and then a part swapped for a look-alike (``1`` for ``true``, ``{}`` for
    ``[]``), which may or may not be equal to it."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.sampled_from(LOOKALIKES))
    if isinstance(value, list):
        return [draw(respellings(item)) for item in value]
    if isinstance(value, dict):
        keys = list(value)
        if draw(st.booleans()):
            keys.reverse()
        return {key: draw(respellings(value[key])) for key in keys}
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, float) and value.is_integer() and draw(st.booleans()):
        return int(value)
    if isinstance(value, int) and draw(st.booleans()):
        return float(value)
    return value


@pytest.mark.spec("JSON-2", "JSON-3")
@given(json_values.flatmap(lambda v: st.tuples(st.just(v), respellings(v))))
def test_the_judge_agrees_with_the_reference_on_respelt_values(
    pair: tuple[Any, Any],
) -> None:
    a, b = pair
    for ordered in (True, False):
        assert same_json(a, b, ordered=ordered) == json_equal(a, b, ordered=ordered)
        assert same_json(b, a, ordered=ordered) == json_equal(b, a, ordered=ordered)


@pytest.mark.spec("JSON-2", "JSON-3")
@given(json_values, json_values)
def test_the_judge_agrees_with_the_reference_on_unrelated_values(
    a: Any, b: Any
) -> None:
    for ordered in (True, False):
        assert same_json(a, b, ordered=ordered) == json_equal(a, b, ordered=ordered)
