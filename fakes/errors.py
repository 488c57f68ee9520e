"""Errors raised by the fake provider.

::

    FakeProviderError(Exception)     root of everything the fake raises on purpose
      InvalidRequest                 a provider request the real API would reject (4xx);
                                     carries status, error type, message and param
      ScriptError(ValueError)        a scripted reply or control request is malformed

`InvalidRequest` never escapes to a client as an exception: the core turns it
into the provider-shaped error body of the dialect that received the request.
Misuse of the Python API (wrong argument types) raises plain `TypeError` or
`ValueError`.
"""

from __future__ import annotations


class FakeProviderError(Exception):
    """Root of the errors the fake provider raises on purpose."""


class InvalidRequest(FakeProviderError):
    """A request the real provider would answer with a 4xx error.

    `error_type` is the provider's error type string (for example
    `invalid_request_error`); `param` names the offending request field when
    one can be named (`messages[2].content`); `code` is the chat dialects'
    error code (`model_not_found`).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        error_type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.error_type = error_type
        self.param = param
        self.code = code


class ScriptError(FakeProviderError, ValueError):
    """A scripted reply, fault or control request is malformed."""
