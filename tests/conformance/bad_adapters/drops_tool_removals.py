"""Applies a tools arm but ignores its `removed` list: a tool the delta
drops stays in the header (breaks TOOLS-4)."""

from typing import Any

from _serve import serve_broken

from reqfold.reference import header
from reqfold.reference.shells import adapter


def apply(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    prev, delta = params["prev"], dict(params["delta"])
    arm = delta.get("tools")
    if isinstance(arm, dict) and arm.get("removed"):
        delta["tools"] = {**arm, "removed": []}
        try:
            return {"header": header.apply_header_delta(prev, delta, rev)}
        except header.DeltaConflict:
            pass
    return {"header": header.apply_header_delta(prev, params["delta"], rev)}


serve_broken({"codec/apply": apply})
