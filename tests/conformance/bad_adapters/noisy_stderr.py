"""Correct, but writes a line to stderr for every request, as many runtimes
log by default: stderr output is never a failure."""

import sys
from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter


def _noisy(method: str) -> Any:
    original = adapter.METHODS[method]

    def handler(params: dict[str, Any]) -> dict[str, Any]:
        print(f"debug: handling {method}", file=sys.stderr, flush=True)
        return original(params)

    return handler


serve_broken({m: _noisy(m) for m in list(adapter.METHODS)})
