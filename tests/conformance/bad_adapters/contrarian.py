"""Answers every codec request wrongly: accepts what must be rejected,
rejects what must be accepted, and returns a perturbed result otherwise.
Every vector must fail on it: no check is vacuous."""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter


def _wrong(method: str) -> Any:
    original = adapter.METHODS[method]

    def handler(params: dict[str, Any]) -> dict[str, Any]:
        try:
            original(params)
        except Exception:
            return {"accepted": True}
        raise adapter.RpcError(adapter.REJECTED, "rejected everything valid")

    return handler


serve_broken({m: _wrong(m) for m in list(adapter.METHODS) if m.startswith("codec/")})
