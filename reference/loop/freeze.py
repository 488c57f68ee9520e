"""Deep freezing: values that raise when anyone tries to change them.

Implements the immutability half of docs/spec.md REQ-7 and PREFIX-1: the
loop hands listeners frozen seeds, caches the session prefix frozen, and
freezes every request before dispatch, so a mutation attempt raises
instead of silently changing what is (or will be) sent.

A frozen JSON value is built from read-only views: an object becomes a
`types.MappingProxyType` over a private dict (item assignment raises
`TypeError`), an array becomes a `tuple` (no ``append``, item assignment
raises `TypeError`). Scalars are immutable already. `deep_freeze` always
copies, so freezing never reaches back into a caller's object; `thaw` turns
a frozen value into plain dicts and lists again (a new deep copy), which is
what the codec functions take. Member order is kept both ways (JSON-3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, TypeAlias

FrozenJson: TypeAlias = Any
"""A frozen JSON value: scalars, tuples and read-only mappings."""

FrozenObject: TypeAlias = Mapping[str, Any]
"""A frozen JSON object."""


def deep_freeze(value: Any) -> FrozenJson:
    """A frozen deep copy of a JSON value (plain or already frozen)."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: deep_freeze(item) for key, item in value.items()})
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return tuple(deep_freeze(item) for item in value)
    return value


def thaw(value: FrozenJson) -> Any:
    """A plain, mutable deep copy of a (possibly frozen) JSON value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [thaw(item) for item in value]
    return value


def is_frozen(value: Any) -> bool:
    """True when no part of `value` can be changed in place."""
    if isinstance(value, MappingProxyType):
        return all(is_frozen(item) for item in value.values())
    if isinstance(value, tuple):
        return all(is_frozen(item) for item in value)
    return value is None or isinstance(value, bool | int | float | str)
