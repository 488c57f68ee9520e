"""Answers initialize (request id 1) with ``"id": true``, as a host language
whose 1 and true are the same value would: true is not 1 (a boolean is not
a number), so the id does not echo and the adapter does not start."""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

real_response = adapter._response


def response(request_id: Any, **kwargs: Any) -> str:
    return real_response(True if request_id == 1 else request_id, **kwargs)


adapter._response = response
serve_broken({})
