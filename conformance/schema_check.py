"""JSON Schema validation with bounded cost, for values an implementation sent.

The suite validates what an adapter answers (``initialize``, the harness
methods' results, notifications) and reports users hand it (``reqfold
compare``). A hostile value must not make that cost more than a moment:

* jsonschema's ``uniqueItems`` compares every pair of items, quadratic in
  the array: `Validator` checks it in linear
  time, with the same equality JSON Schema defines (``1`` equals ``1.0``,
  ``true`` does not equal ``1``, member order does not count);
* collecting every error before the first is reported costs memory and
  time in proportion to the errors:
  `first_problem` takes the first and counts a few more, lazily;
* a value of more than `MAX_NODES` JSON values is refused unread by
  `too_large` where no honest answer comes near it.
"""

from __future__ import annotations

import ast
import contextlib
import json
from collections.abc import Hashable, Iterator
from itertools import islice
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators

MAX_NODES = 100_000
"""The most JSON values (objects, arrays, strings, numbers, ...) a protocol
message is validated with: an ``initialize`` answer holds a few dozen."""

MORE_COUNTED = 100
"""Errors counted after the first, at most (then "100+ more")."""


def _identity(value: Any) -> Hashable:
    """A hashable stand-in with JSON Schema's equality: numbers by value,
    booleans apart from numbers, objects regardless of member order."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float):
        return ("number", value)
    if isinstance(value, dict):
        return ("object", frozenset((k, _identity(v)) for k, v in value.items()))
    if isinstance(value, list):
        return ("array", tuple(_identity(item) for item in value))
    return (type(value).__name__, value)


def _unique_items(
    validator: Any, unique: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not (unique and validator.is_type(instance, "array")):
        return
    seen: set[Hashable] = set()
    for item in instance:
        identity = _identity(item)
        if identity in seen:
            yield ValidationError(f"{instance!r:.200} has non-unique elements")
            return
        seen.add(identity)


Validator: Any = validators.extend(  # type: ignore[no-untyped-call]
    Draft202012Validator, {"uniqueItems": _unique_items}
)
"""Draft 2020-12 with a linear ``uniqueItems``."""


def too_large(value: Any, limit: int = MAX_NODES) -> bool:
    """Whether `value` holds more than `limit` JSON values (stops counting there)."""
    pending = [value]
    count = 0
    while pending:
        item = pending.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            if count + len(item) > limit:
                return True
            pending.extend(item)
    return False


def first_problem(validator: Any, value: Any) -> tuple[ValidationError, str] | None:
    """The first error of `value`, and how many more there are ("", " (and 3
    more)", " (and 100+ more)"); None when `value` is valid."""
    errors = validator.iter_errors(value)
    first = next(errors, None)
    if first is None:
        return None
    more = sum(1 for _ in islice(errors, MORE_COUNTED + 1))
    if more == 0:
        return first, ""
    count = f"{MORE_COUNTED}+" if more > MORE_COUNTED else str(more)
    return first, f" (and {count} more)"


def error_text(error: ValidationError, limit: int = 200) -> str:
    """jsonschema's message for `error`, the value it is about written as
    JSON (``null is not of type 'array'``), never as Python's repr
    (``None``), cut after `limit` characters."""
    message = str(error.message)
    shown = repr(error.instance)
    if error.validator == "required" and isinstance(error.validator_value, list):
        missing = message.removesuffix(" is a required property")
        with contextlib.suppress(SyntaxError, ValueError):
            name = ast.literal_eval(missing)
            if isinstance(name, str):
                message = f"{json.dumps(name)} is a required property"
    elif error.validator == "enum" and isinstance(error.validator_value, list):
        listed = json.dumps(error.validator_value, ensure_ascii=False, default=str)
        message = f"{_json(error.instance, limit)} is not one of {listed}"
    elif message.startswith(shown):
        message = _json(error.instance, limit) + message[len(shown) :]
    return message[:limit]


def _json(value: Any, limit: int) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
