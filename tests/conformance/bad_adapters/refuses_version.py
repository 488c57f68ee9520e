"""Speaks protocol version 2 only: initialize is refused, so no case runs."""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    raise adapter.RpcError(adapter.INVALID_PARAMS, "this adapter speaks version 2")


serve_broken({"initialize": initialize})
