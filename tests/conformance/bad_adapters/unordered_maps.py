"""Keeps JSON objects in sorted key order, as an implementation with
unordered maps would: every answer is right by value, member order is
lost. Only SHOULD rules (JSON-3, HDR-5) notice: warnings, not failures."""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter


def _sorted(value: Any) -> Any:
    if isinstance(value, list):
        return [_sorted(v) for v in value]
    if isinstance(value, dict):
        return {k: _sorted(value[k]) for k in sorted(value)}
    return value


def _unordered(method: str) -> Any:
    original = adapter.METHODS[method]

    def handler(params: dict[str, Any]) -> dict[str, Any]:
        revision = params.get("revision")
        params = _sorted(params)
        if revision is not None:
            params["revision"] = revision
        return _sorted(original(params))

    return handler


serve_broken(
    {m: _unordered(m) for m in list(adapter.METHODS) if m.startswith("codec/")}
)
