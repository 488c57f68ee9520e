"""Reorders every object as JavaScript's ``JSON.parse`` does: members whose
name is an array index (``"10"``, not ``"010"``) come first, in ascending
numeric order, before the others in insertion order. Right by value
everywhere; member order is lost exactly where a key is integer-like, so
only the SHOULD rule JSON-3 notices, and only on vectors that hold such a
key (a JavaScript adapter written from the docs passed every vector before
they existed).
"""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

MAX_INDEX = 2**32 - 2


def _is_index(key: str) -> bool:
    return key.isdigit() and str(int(key)) == key and int(key) <= MAX_INDEX


def hoist(value: Any) -> Any:
    """`value` with every object's members in JavaScript's property order."""
    if isinstance(value, list):
        return [hoist(item) for item in value]
    if isinstance(value, dict):
        indices = sorted((k for k in value if _is_index(k)), key=int)
        names = [k for k in value if not _is_index(k)]
        return {key: hoist(value[key]) for key in indices + names}
    return value


def hoisting(name: str) -> Any:
    handler = adapter.METHODS[name]

    def handle(params: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = hoist(handler(hoist(params)))
        return result

    return handle


serve_broken({name: hoisting(name) for name in adapter.METHODS if name != "initialize"})
