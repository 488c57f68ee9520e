"""Errors of the suite itself and of the implementations it drives.

A wrong answer from an implementation is a *failure* and is never raised:
it is an outcome. What is raised here is an *error*: the implementation's
adapter could not be talked to, so no verdict on the contract is possible::

    ConformanceError(Exception)     root
      AdapterError                  the adapter process misbehaved
        AdapterStartupFailed        it could not be started or initialized
        VersionMismatch             it refused our protocol version
        AdapterCrashed              it exited while a request was pending
        AdapterTimeout              it did not answer in time (it is killed)
        AdapterProtocolError        it answered with something not strict JSON-RPC,
                                    or wrote stdout lines nobody asked for

Every `AdapterError` carries the tail of the adapter's stderr, so a report
can show why an implementation broke. Two errors live beside the modules
that raise them: `reqfold.conformance.harness.scenarios.ScenarioError` (a scenario
file that cannot be used) and `reqfold.conformance.harness.driver.ScenarioBroken`
(an adapter refused a step a scenario needs: no verdict on it).
"""

from __future__ import annotations

from typing import ClassVar


class ConformanceError(Exception):
    """Root of the suite's own errors."""


class AdapterError(ConformanceError):
    """The adapter of the implementation under test misbehaved."""

    label: ClassVar[str] = "adapter error"
    """What went wrong in a word or two, in messages a user reads (never
    the class's name)."""

    def __init__(self, message: str, *, stderr_tail: str = "") -> None:
        self.detail = message
        self.stderr_tail = stderr_tail
        super().__init__(message)


class AdapterStartupFailed(AdapterError):
    """The adapter could not be started or did not complete ``initialize``."""

    label = "start-up failed"


class VersionMismatch(AdapterStartupFailed):
    """The adapter does not speak this protocol version."""


class AdapterCrashed(AdapterError):
    """The adapter exited (or closed stdout) with a request pending."""

    label = "crash"


class AdapterTimeout(AdapterError):
    """The adapter did not answer within the per-request timeout."""

    label = "timeout"


class AdapterProtocolError(AdapterError):
    """The adapter answered with a line that is not a valid JSON-RPC response.

    Also: a line that is not strict JSON (NaN, a repeated key, a lone
    surrogate), an id that does not echo the request's, a line too long,
    or stdout lines written when no request was waiting for them.
    """

    label = "protocol error"
