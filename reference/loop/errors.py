"""Errors raised by the reference loop and its provider client::

    AgentError(Exception)          root for the loop; .code (stable, upper case)
      LoopDisposed                 the loop instance was disposed
      NoModel                      the request config has no model (CONFIG-1)
      RequestDiverges              dev invariant: a request differs from its log
                                   rebuild (REQ-1 .. REQ-6); .rule
      PersistenceFailed            the sink refused an event; nothing was logged
      ListenerCancelled            a session-event listener raised CancelledError
      ProviderError                the provider answered with an error status or
                                   a model stop; .status, .code
        ProviderProtocolError      the provider's answer breaks the wire format

A step that raises one of these (or any other exception from a listener or
a tool's plumbing) ends its turn ``{"kind": "error", "step", "message",
"code"?}`` -- or ``aborted``/``disposed`` when the turn had been cancelled
or disposed first (a listener honouring the signal raises). `RequestDiverges`
is different: it means the harness broke the contract, so after the turn is
closed it propagates to the caller. It is raised before the step's header
event is logged, so nothing was sent for it.
"""

from __future__ import annotations


class AgentError(Exception):
    """Something went wrong inside a loop step."""

    code: str | None = None

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class LoopDisposed(AgentError):
    """The loop instance was disposed; it runs no more turns."""

    code = "DISPOSED"


class NoModel(AgentError):
    """The request config waterfall left `config.model` empty."""

    code = "NO_MODEL"


class RequestDiverges(AgentError):
    """A request differs from what the log alone rebuilds (dev-mode invariant)."""

    code = "REQUEST_DIVERGES"

    def __init__(self, message: str, *, rule: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule


class PersistenceFailed(AgentError):
    """The sink refused an event (disk full...); the event was not logged.

    The loop persists an event before it logs it in memory, so after this
    error the file and the in-memory log still agree.
    """

    code = "PERSISTENCE_FAILED"


class ListenerCancelled(AgentError):
    """A synchronous session-event listener raised `asyncio.CancelledError`.

    A synchronous call cannot be interrupted by the cancellation of the task
    running it, so this is the listener's own error, not a cancellation.
    """

    code = "LISTENER_CANCELLED"


class ProviderError(AgentError):
    """The provider answered with an error status, or the model stopped on error."""

    def __init__(self, message: str, *, code: str, status: int | None = None) -> None:
        super().__init__(message, code=code)
        self.status = status


class ProviderProtocolError(ProviderError):
    """The provider's answer is not valid chat-completions wire format."""
