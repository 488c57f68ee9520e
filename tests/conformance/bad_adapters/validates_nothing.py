"""Right on every input a conforming writer produces, and validates nothing.

A port of the original design's codec: it takes headers, deltas and logs
to be well-formed and canonical, as the original's loop only ever hands
them over, so it never rejects anything except what the design itself
rejects (a delta before any snapshot). A malformed or conflicting delta
is clamped or ignored, a field of another revision is dropped, a
non-canonical header handed to equals, diff, apply or fold is read as it
is. It does not claim ``strict`` in ``initialize``: it must pass the
``core`` profile and fail ``strict`` (docs/vectors.md, "Profiles").
"""

from typing import Any

from _serve import serve_broken

from reqfold.reference.errors import DeltaBeforeSnapshot
from reqfold.reference.header import diff_canonical, project_canonical
from reqfold.reference.json_values import json_equal
from reqfold.reference.shells import adapter


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    identity = adapter._initialize(params)
    return {**identity, "name": "validates-nothing", "capabilities": ["codec"]}


def _apply(prev: dict[str, Any], delta: dict[str, Any], rev: Any) -> dict[str, Any]:
    result = dict(prev)
    if "system" in delta:
        lines = prev["system"].split("\n") if prev.get("system") else []
        arm = delta["system"]
        start = min(int(arm["keepStart"]), len(lines))
        end = min(int(arm["keepEnd"]), len(lines) - start)
        kept = lines[:start] + arm["insert"] + lines[len(lines) - end :]
        result["system"] = "\n".join(kept)
    if "tools" in delta:
        arm = delta["tools"]
        changed = {tool["name"]: tool for tool in arm["changed"]}
        result["tools"] = [
            changed.get(tool["name"], tool)
            for tool in prev.get("tools", [])
            if tool["name"] not in arm["removed"]
        ] + arm["added"]
    for field in ("config", *rev.message_fields):
        if field in delta:
            result[field] = delta[field]
    return project_canonical(result, rev)


def canonical(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    return {"header": project_canonical(params["header"], rev)}


def equals(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    a, b = project_canonical(params["a"], rev), project_canonical(params["b"], rev)
    return {"equal": json_equal(a, b)}


def diff(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    return {"delta": diff_canonical(params["prev"], params["next"], rev)}


def apply(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    return {"header": _apply(params["prev"], params["delta"], rev)}


def fold(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    state = params.get("from")
    for event in params["events"]:
        if event.get("type") == "request/header":
            state = project_canonical(event["data"]["header"], rev)
        elif event.get("type") == "request/header-delta":
            if state is None:
                raise DeltaBeforeSnapshot(
                    "a delta before any snapshot", rule="FOLD-2", seq=event.get("seq")
                )
            state = _apply(state, event["data"], rev)
    return {"header": state}


def record(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    baseline = params["baseline"]
    current = project_canonical(params["header"], rev)
    if not params["loggedThisInstance"]:
        reason = "initial" if baseline is None else "resume"
        snapshot = {"header": current, "reason": reason}
        return {"event": {"type": "request/header", "data": snapshot}}
    delta = diff_canonical(baseline, current, rev)
    if delta is None:
        return {"event": None}
    if json_equal(_apply(baseline, delta, rev), current):
        return {"event": {"type": "request/header-delta", "data": delta}}
    fallback = {"header": current, "reason": "fallback"}
    return {"event": {"type": "request/header", "data": fallback}}


serve_broken(
    {
        "initialize": initialize,
        "codec/canonical": canonical,
        "codec/equals": equals,
        "codec/diff": diff,
        "codec/apply": apply,
        "codec/fold": fold,
        "codec/record": record,
    }
)
