"""Rejects exactly what it must, but its errors name the wrong rule and no seq.

Its codec funnels every failure through one wrapper that keeps the error's
kind and message but names the rule of the method it was in (``FOLD-1``
for every fold error, ``DELTA-3`` for every apply error...) instead of the
rule the input breaks, and drops the faulty event's seq from the error
data (the message still says it). Every rejection is still ``-32000``, so
the contract holds; the diagnosis the adapter protocol promises
(``error.data.rule``, ``error.data.seq``) is wrong. Expected: SHOULD
warnings on every rejection, no failure; ``--strict`` fails it
(docs/vectors.md, "What a rejection is judged on").
"""

from typing import Any

from _serve import Handler, serve_broken

from reqfold.reference.errors import CodecError
from reqfold.reference.shells import adapter

METHOD_RULES = {
    "codec/canonical": "HDR-4",
    "codec/equals": "EQ-1",
    "codec/diff": "DELTA-2",
    "codec/apply": "DELTA-3",
    "codec/fold": "FOLD-1",
    "codec/record": "WRITER-5",
}


def misnamed(method: str, handler: Handler) -> Handler:
    def handle(params: dict[str, Any]) -> dict[str, Any]:
        try:
            return handler(params)
        except CodecError as error:
            raise type(error)(str(error), rule=METHOD_RULES[method]) from None

    return handle


serve_broken(
    {method: misnamed(method, adapter.METHODS[method]) for method in METHOD_RULES}
)
