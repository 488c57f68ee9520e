"""Has a bug in its diff: every codec/diff request raises inside the
implementation, which the adapter reports as -32603 internal error. That
is an error (no verdict) for those cases, not a failure of the contract."""

from typing import Any

from _serve import serve_broken


def diff(params: dict[str, Any]) -> dict[str, Any]:
    raise ZeroDivisionError("bug in diff")


serve_broken({"codec/diff": diff})
