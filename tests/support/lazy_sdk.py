"""A provider's official SDK, imported when a test first uses it.

``openai`` and ``anthropic`` take 0.5 s and 1.3 s of CPU to import, and
every xdist worker collects every test module: imported at the top of a
test module, each worker paid for them whether or not it ran one of their
tests (docs/test-suite.md). `LazySdk` imports on the first attribute a test
reads, and skips that test, saying so, where the SDK is not installed, as
``pytest.importorskip`` at the top of the module skipped them all.
Importable as ``lazy_sdk`` (``pythonpath = ["tests/support"]``).
"""

from __future__ import annotations

from typing import Any

import pytest


class LazySdk:
    """Stands for the module `name` until a test reads from it."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("_"):  # pytest's collector asks for __test__
            raise AttributeError(attribute)
        return getattr(pytest.importorskip(self._name), attribute)
