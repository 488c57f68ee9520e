"""The judge's own JSON comparison, sharing no code with the reference's.

The suite judges implementations, the reference among them, by comparing
JSON values: a vector's expected result with an answer, a logged delta with
what diff yields, a folded header with a resume snapshot. If the judge
compared with the reference's `reqfold.reference.json_values.json_equal`, one
defect there would make the reference wrong and the judge blind to it in
the same stroke. So the judge has its own comparison, written from
docs/spec.md and held to agree with the reference's by a property test
(tests/reference/test_json_values.py), so a defect in either shows up.

The relation (JSON-2, and JSON-3 with ``ordered``): each value is first
sorted into one of six sorts (null, boolean, number, string, array,
object) and values of different sorts are never equal, so ``true`` is not
``1`` and ``null`` is not ``0``. Numbers are equal when they are the same
number, whatever the spelling (``1`` and ``1.0``, ``0`` and ``-0.0``; big
integers exactly: 2**53 + 1 is not 2.0**53). Arrays are equal element by
element in order; objects have the same member names with equal values
and, with ``ordered``, in the same order. What is not a JSON value (NaN, a
set, a tuple) equals nothing but the very same object. The walk is
iterative, so nesting depth is bounded by memory, and it stops at the
first difference (the checker calls it on every header event).
"""

from __future__ import annotations

import enum
from typing import Any


class _Sort(enum.Enum):
    NULL = "null"
    BOOLEAN = "boolean"
    NUMBER = "number"
    STRING = "string"
    ARRAY = "array"
    OBJECT = "object"
    NOT_JSON = "not a JSON value"


def _sort(value: Any) -> _Sort:
    if value is None:
        return _Sort.NULL
    if value is True or value is False:
        return _Sort.BOOLEAN
    if isinstance(value, int | float):
        return _Sort.NUMBER if value == value else _Sort.NOT_JSON  # NaN
    if isinstance(value, str):
        return _Sort.STRING
    if isinstance(value, list):
        return _Sort.ARRAY
    if isinstance(value, dict):
        return _Sort.OBJECT
    return _Sort.NOT_JSON


def same_json(a: Any, b: Any, *, ordered: bool = True) -> bool:
    """True when `a` and `b` are equal JSON values (JSON-2; `ordered`: JSON-3 too)."""
    pending: list[tuple[Any, Any]] = [(a, b)]
    while pending:
        x, y = pending.pop()
        if x is y:
            continue
        sort = _sort(x)
        if sort is not _sort(y) or sort is _Sort.NOT_JSON:
            return False
        if sort is _Sort.ARRAY:
            if len(x) != len(y):
                return False
            pending.extend(zip(x, y, strict=True))
        elif sort is _Sort.OBJECT:
            if len(x) != len(y):
                return False
            names = list(x)
            if ordered and names != list(y):
                return False
            for name in names:
                if name not in y:
                    return False
                pending.append((x[name], y[name]))
        elif x != y:  # null, boolean, number, string: Python's == is JSON's here
            return False
    return True
