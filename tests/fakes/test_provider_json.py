"""The strict body parser: msgspec first, the standard parser for errors."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.provider_json import parse_json_body, parse_json_body_slowly

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON, st.booleans())
def test_both_parsers_give_the_same_value_with_member_order(value, ascii_only):
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    fast = parse_json_body(raw)
    assert fast == parse_json_body_slowly(raw)
    assert json.dumps(fast) == json.dumps(value)  # member order kept, floats exact


def test_a_duplicated_member_keeps_its_first_place_and_its_last_value():
    raw = b'{"a": 1, "b": 2, "a": 3}'
    assert list(parse_json_body(raw).items()) == [("a", 3), ("b", 2)]


@pytest.mark.parametrize(
    ("raw", "wording"),
    [
        (b"", "empty"),
        (b"  ", "empty"),
        (b"\xff{}", "not valid UTF-8 (byte 0)"),
        (b'{"a": NaN}', "NaN is not a JSON value"),
        (b'{"a": -Infinity}', "-Infinity is not a JSON value"),
        (b'{"a": 1e400}', "the number 1e400 is out of range"),
        (b'{"a": "\\ud800"}', "unpaired UTF-16 surrogate"),
        (b'{"\\udc00": 1}', "unpaired UTF-16 surrogate"),
        (b"1" * 5_000, "not acceptable JSON"),
        (b'{"a": 1,}', "not valid JSON: Expecting property name"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_what_msgspec_refuses_gets_the_standard_parsers_words(raw, wording):
    with pytest.raises(InvalidRequest, match="request body") as fast:
        parse_json_body(raw)
    with pytest.raises(InvalidRequest) as slow:
        parse_json_body_slowly(raw)
    assert wording in fast.value.message
    assert fast.value.message == slow.value.message
