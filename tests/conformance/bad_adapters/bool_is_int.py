"""Compares JSON values with the host language's loose equality, where true
equals 1 and false equals 0 (breaks JSON-2)."""

from typing import Any

from _serve import serve_broken

from reqfold.reference import header
from reqfold.reference.shells import adapter


def _loosen(value: Any) -> Any:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list):
        return [_loosen(v) for v in value]
    if isinstance(value, dict):
        return {k: _loosen(v) for k, v in value.items()}
    return value


def equals(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    a, b = _loosen(params["a"]), _loosen(params["b"])
    return {"equal": header.header_equals(a, b, rev)}


serve_broken({"codec/equals": equals})
