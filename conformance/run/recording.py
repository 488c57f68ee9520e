"""Keeping the implementation's answers, for the reproductions of failures.

The codec runners judge an answer and keep only the verdict and a
message; a report's reproduction wants the answer itself. `Recorder.wrap`
puts a `Connection` between the runner and the implementation that keeps
the latest answers by method and params, so the report finds the answer
to a failing vector (or a property's counterexample) without asking the
implementation again. Only the latest `LIMIT` are kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

from reqfold.conformance.adapters.connection import Connection
from reqfold.conformance.json_text.values import encode_json
from reqfold.reference.json_values import JsonObject

LIMIT = 4096
"""Answers kept (a property's shrinking asks a few hundred inputs)."""


def _key(method: str, params: JsonObject) -> str | None:
    try:
        return encode_json([method, params])
    except (TypeError, ValueError):  # NaN or not JSON: never asked again
        return None


class Recorder:
    """The latest answers of an implementation, by method and params."""

    def __init__(self) -> None:
        self._answers: OrderedDict[str, JsonObject] = OrderedDict()

    def keep(self, method: str, params: JsonObject, response: JsonObject) -> None:
        """Remember `response` to `method` with `params`."""
        key = _key(method, params)
        if key is None:
            return
        self._answers[key] = response
        self._answers.move_to_end(key)
        while len(self._answers) > LIMIT:
            self._answers.popitem(last=False)

    def answer(self, method: str, params: JsonObject) -> JsonObject | None:
        """The latest answer to `method` with `params`, if one was kept."""
        key = _key(method, params)
        return None if key is None else self._answers.get(key)

    def wrap(self, connect: Callable[[], Connection]) -> Callable[[], Connection]:
        """`connect`, with every answer of the connections it makes kept."""
        return lambda: _Recording(connect(), self)


class _Recording:
    """A `Connection` that keeps each answer in its `Recorder`."""

    def __init__(self, inner: Connection, recorder: Recorder) -> None:
        self.inner = inner
        self.recorder = recorder

    def initialize(self) -> JsonObject:
        return self.inner.initialize()

    def request(self, method: str, params: JsonObject) -> JsonObject:
        response = self.inner.request(method, params)
        self.recorder.keep(method, params, response)
        return response

    def close(self) -> None:
        self.inner.close()
