"""Answers wrongly, and hugely: every ``codec/canonical`` with a header of
2 MB, every ``codec/diff`` with a delta nested 900 deep. Quoted whole, each
filled the terminal and the reports with megabytes per failing check (the
nested one quadratically, once indented)."""

from typing import Any

from _serve import serve_broken

WIDE = "x" * 2_000_000


def _nested(depth: int) -> Any:
    value: Any = {"end": True}
    for level in range(depth):
        value = [level, value]
    return value


DEEP = _nested(900)


def canonical(params: dict[str, Any]) -> dict[str, Any]:
    return {"header": {"config": {"model": WIDE}}}


def diff(params: dict[str, Any]) -> dict[str, Any]:
    return {"delta": DEEP}


serve_broken({"codec/canonical": canonical, "codec/diff": diff})
