"""Where two JSON values first differ, as a JSON path.

Below every tool: the scenario judge records a check's first difference
when it makes the check, and the reports show the codec parts' ones.
"""

from __future__ import annotations

import math
import re

from reqfold.reference.json_values import JsonValue


def _key_path(path: str, key: str) -> str:
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        return f"{path}.{key}"
    return f"{path}[{key!r}]"


def _same_number(a: JsonValue, b: JsonValue) -> bool:
    both = isinstance(a, int | float) and isinstance(b, int | float)
    if not both or isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, float) and math.isnan(a):
        return False
    return bool(a == b)


def first_difference(
    expected: JsonValue, found: JsonValue, path: str = "$"
) -> str | None:
    """The path of the first place `found` differs from `expected`, or None.

    Values compare as JSON (``true`` is not ``1``, ``1`` equals ``1.0``);
    objects first by members (a missing or extra member is its own path),
    then by member order, which reports the object itself.
    """
    if isinstance(expected, dict) and isinstance(found, dict):
        for key in expected:
            if key not in found:
                return _key_path(path, key)
            inner = first_difference(expected[key], found[key], _key_path(path, key))
            if inner is not None:
                return inner
        for key in found:
            if key not in expected:
                return _key_path(path, key)
        return None if list(expected) == list(found) else path
    if isinstance(expected, list) and isinstance(found, list):
        for index, (a, b) in enumerate(zip(expected, found, strict=False)):
            inner = first_difference(a, b, f"{path}[{index}]")
            if inner is not None:
                return inner
        if len(expected) != len(found):
            return f"{path}[{min(len(expected), len(found))}]"
        return None
    if _same_number(expected, found):
        return None
    if type(expected) is type(found) and expected == found:
        return None
    return path
