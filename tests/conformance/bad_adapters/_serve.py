"""Serve the reference adapter with some methods replaced by broken ones.

Each known-bad adapter in this folder is a script that calls `serve_broken`
with the handlers it breaks; everything else behaves like the reference.
Run as ``python tests/conformance/bad_adapters/NAME.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reqfold.reference.shells import adapter

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def serve_broken(overrides: dict[str, Handler]) -> None:
    """Serve stdin/stdout with `overrides` in place of the reference's handlers."""
    adapter.METHODS.update(overrides)
    raise SystemExit(adapter.main())
