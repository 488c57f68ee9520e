"""Compares configs on model, temperature, maxTokens and stop only, as the
original harness did: a change to any other config member is not seen, so
equals says equal and diff emits no config arm (breaks EQ-2)."""

from typing import Any

from _serve import serve_broken

from reqfold.reference import header
from reqfold.reference.shells import adapter

KNOWN = ("model", "temperature", "maxTokens", "stop")


def _narrow(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("config"), dict):
        config = {k: v for k, v in value["config"].items() if k in KNOWN}
        return {**value, "config": config}
    return value


def equals(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    a, b = _narrow(params["a"]), _narrow(params["b"])
    return {"equal": header.header_equals(a, b, rev)}


def diff(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    if header.header_equals(_narrow(params["prev"]), _narrow(params["next"]), rev):
        return {"delta": None}
    return {"delta": header.diff_header(params["prev"], params["next"], rev)}


serve_broken({"codec/equals": equals, "codec/diff": diff})
