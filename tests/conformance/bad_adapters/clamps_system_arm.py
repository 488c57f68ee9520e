"""Clamps a system arm's keepStart/keepEnd to the prompt's length instead of
rejecting it, turning a corrupt delta into a wrong header (breaks SYS-5)."""

from typing import Any

from _serve import serve_broken

from reqfold.reference import header
from reqfold.reference.shells import adapter


def apply(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    prev, delta = params["prev"], dict(params["delta"])
    arm = delta.get("system")
    if isinstance(arm, dict) and isinstance(prev, dict):
        lines = len(header.system_lines(prev.get("system") or None))
        keep_start = min(arm.get("keepStart", 0), lines)
        keep_end = min(arm.get("keepEnd", 0), lines - keep_start)
        delta["system"] = {**arm, "keepStart": keep_start, "keepEnd": keep_end}
    return {"header": header.apply_header_delta(prev, delta, rev)}


serve_broken({"codec/apply": apply})
