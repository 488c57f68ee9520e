"""Answers ``instance/send`` with the request's id plus 1000 (a response
routed to the wrong request, as a harness multiplexing its own requests
might): the answer does not echo the request id, a protocol error. Every
other request is answered as the reference does."""

from __future__ import annotations

from typing import Any

from _chaos import say, serve

from reqfold.reference.shells import adapter, harness_stdio
from reqfold.reference.shells.adapter import Request, RpcError


def answer(
    request: Request, *, result: Any = None, error: RpcError | None = None
) -> bytes | None:
    if request.method == "instance/send" and isinstance(request.id, int):
        say(f"answering request {request.id} as {request.id + 1000}")
        return adapter.frame(request.id + 1000, result=result, error=error)
    return adapter.answer(request, result=result, error=error)


harness_stdio.answer = answer
serve()
