"""JSON values: what may be logged, how values compare, how they serialize.

Implements docs/spec.md section "JSON values" (JSON-1 .. JSON-5):

* A JSON value is ``None``, ``bool``, ``int``, a finite ``float``, ``str``
  (Unicode text: no lone surrogates), a ``list`` of JSON values, or a
  ``dict`` with ``str`` keys and JSON values. No NaN or infinities, no
  tuples, no cycles (JSON-1).
* Equality is by value: ``True`` is not ``1``, ``1`` equals ``1.0``, arrays
  compare element-wise in order (JSON-2, MUST). Object member order is part
  of equality too (JSON-3, SHOULD): it is what makes reconstruction
  byte-exact. ``json_equal(..., ordered=False)`` is the MUST-only relation.
* The canonical text of a value is compact JSON with members in insertion
  order and non-ASCII kept (JSON-4); the log and the wire use it.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeAlias, TypeGuard

from reqfold.reference.errors import NotJsonValue

JsonValue: TypeAlias = Any
"""A JSON value as decoded by ``json.loads`` (see module docstring)."""

JsonObject: TypeAlias = dict[str, Any]

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def has_lone_surrogate(text: str) -> bool:
    """True when `text` holds an unpaired surrogate: not Unicode text (JSON-1)."""
    return _LONE_SURROGATE.search(text) is not None


def escape_lone_surrogates(text: str) -> str:
    """`text` with each unpaired surrogate spelt as an escape (``\\ud800``).

    For messages that quote what failed (a tool's name, an exception, a
    request's input), which may hold one: escaped, they can be logged and
    written as JSON (JSON-1).
    """
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def is_integer(value: object) -> TypeGuard[int | float]:
    """True for a JSON integer: a number with no fractional part (``1.0`` too).

    Implements JSON-5: since ``1`` equals ``1.0`` (JSON-2), a member that
    must be an integer accepts either spelling; booleans are not numbers.
    """
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def check_json_value(
    value: object, *, what: str = "value", seq: int | None = None
) -> None:
    """Raise `NotJsonValue` unless `value` is a JSON value (JSON-1).

    `seq` is the log position the error names, when the value is an
    event's. Iterative, so nesting depth is bounded by memory, not the C
    stack.

    Most values are plain (`_plainly_json`): those are accepted after one
    quick pass, which recurses at most `_PLAIN_DEPTH` deep (a caller too
    close to the recursion limit for it gets the walk). The walk
    (`_walk_json`) judges the rest, so what is refused, and the error that
    says why, is the same either way.
    """
    try:
        plain = _plainly_json(value, 0)
    except RecursionError:
        plain = False
    if not plain:
        _walk_json(value, what, seq)


def _walk_json(value: object, what: str, seq: int | None) -> None:
    """`check_json_value` for any value: raises at the first defect it meets."""
    on_path: set[int] = set()
    stack: list[tuple[object, bool]] = [(value, False)]
    while stack:
        item, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        if isinstance(item, str):
            if has_lone_surrogate(item):
                raise NotJsonValue(
                    f"{what} holds a string with a lone surrogate, which is not"
                    " Unicode text",
                    rule="JSON-1",
                    seq=seq,
                )
            continue
        if item is None or isinstance(item, bool):
            continue
        if isinstance(item, int):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise NotJsonValue(
                    f"{what} holds a non-finite number", rule="JSON-1", seq=seq
                )
            continue
        if isinstance(item, list | dict):
            if id(item) in on_path:
                raise NotJsonValue(f"{what} contains a cycle", rule="JSON-1", seq=seq)
            on_path.add(id(item))
            stack.append((item, True))
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        raise NotJsonValue(
                            f"{what} has a non-string object key {key!r}",
                            rule="JSON-1",
                            seq=seq,
                        )
                    stack.append((key, False))
                    stack.append((child, False))
            else:
                stack.extend((child, False) for child in item)
            continue
        raise NotJsonValue(
            f"{what} holds a {type(item).__name__}, which is not a JSON value",
            rule="JSON-1",
            seq=seq,
        )


_PLAIN_DEPTH = 64
"""How deep `_plainly_json` looks: deeper values (and cycles) take the walk."""


def _plainly_json(value: object, depth: int) -> bool:
    """True when `value` is a JSON value built of the exact built-in types
    (no subclasses), its strings free of lone surrogates, nested at most
    `_PLAIN_DEPTH` deep; False when it may not be one, or is one of another
    kind. A shortcut for `check_json_value`, about five times as fast as
    its walk: it needs no stack of its own and no set of the containers on
    the path (a cycle runs past the depth bound), and an ASCII string
    cannot hold a surrogate.
    """
    if type(value) is str:
        return value.isascii() or not has_lone_surrogate(value)
    if type(value) is dict:
        if depth >= _PLAIN_DEPTH:
            return False
        for key, child in value.items():
            if type(key) is not str or not (
                key.isascii() or not has_lone_surrogate(key)
            ):
                return False
            if not _plainly_json(child, depth + 1):
                return False
        return True
    if type(value) is list:
        if depth >= _PLAIN_DEPTH:
            return False
        for child in value:  # noqa: SIM110 (all() of a generator: twice as slow)
            if not _plainly_json(child, depth + 1):
                return False
        return True
    if type(value) is float:
        return math.isfinite(value)
    return value is None or type(value) is int or type(value) is bool


def json_equal(a: JsonValue, b: JsonValue, *, ordered: bool = True) -> bool:
    """Compare two JSON values (JSON-2; with ``ordered``, JSON-3 too)."""
    if a is b:
        return True
    stack: list[tuple[Any, Any]] = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if not (isinstance(x, bool) and isinstance(y, bool) and x == y):
                return False
        elif (isinstance(x, int | float) and isinstance(y, int | float)) or (
            isinstance(x, str) and isinstance(y, str)
        ):
            if x != y:
                return False
        elif x is None or y is None:
            if x is not y:
                return False
        elif isinstance(x, list) and isinstance(y, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif isinstance(x, dict) and isinstance(y, dict):
            if len(x) != len(y):
                return False
            if ordered:
                if list(x) != list(y):
                    return False
            elif x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        else:
            return False
    return True


def canonical_json(value: JsonValue) -> str:
    """The canonical text of a JSON value (JSON-4): compact, insertion order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def copy_json(value: JsonValue) -> JsonValue:
    """A deep copy of a JSON value, iterative so any nesting depth works."""
    if not isinstance(value, list | dict):
        return value
    root: Any = [] if isinstance(value, list) else {}
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, target = stack.pop()
        items = source.items() if isinstance(source, dict) else enumerate(source)
        for key, child in items:
            if isinstance(child, list | dict):
                copied: Any = [] if isinstance(child, list) else {}
                stack.append((child, copied))
            else:
                copied = child
            if isinstance(target, dict):
                target[key] = copied
            else:
                target.append(copied)
    return root


def _refuse_repeated_keys(pairs: list[tuple[str, Any]]) -> JsonObject:
    result: JsonObject = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"object repeats the key {key!r} (JSON-1)")
        result[key] = value
    return result


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse_json(text: str) -> JsonValue:
    """Parse JSON text strictly: no repeated keys, no NaN/Infinity tokens (JSON-1).

    A number too large for a double (``1e400``) is valid JSON *text* and
    becomes ``float("inf")``; `check_json_value` then refuses it as a value.
    """
    return json.loads(
        text, object_pairs_hook=_refuse_repeated_keys, parse_constant=_refuse_constant
    )
