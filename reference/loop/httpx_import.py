"""httpx, imported without its command line; its network transport without trio.

httpx's package imports its command-line tool (click, pygments, rich)
whenever rich is installed, a large share of a process's start-up for code
the client never runs (docs/benchmarks.md, "Numbers behind the code").
Imported through here, httpx finds its ``_main`` module already present
without ``main`` and falls back to the stub it keeps for when its
CLI's dependencies are missing. So in such a process ``httpx.main`` is that
stub (it says the CLI is not installed; nothing in reqfold calls it), while
``import httpx._main`` still loads the real CLI. The placeholder is in
``sys.modules`` only while httpx's package imports, under the import
lock; a thread importing ``httpx._main`` at that very moment would fail.

httpx imports httpcore, its network transport, when a client without a
transport of its own is made, and httpcore imports trio whenever trio is
installed, to run under trio as well: CPU and an ``ldconfig`` child
process at every start of a harness adapter that runs
on asyncio only (where trio is installed). `import_httpcore_without_trio`
imports httpcore with trio hidden, for the entry point of such a process
(``python -m reqfold.reference.harness_adapter``) and nowhere else: httpcore then
keeps ``trio = None`` for the rest of the process, so httpx under trio
fails there, and a thread importing trio meanwhile would fail too. A
program that uses the reference client as a library imports httpcore as
usual.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import ModuleType

_CLI = "httpx._main"
_TRIO = "trio"


@contextlib.contextmanager
def _standing_in(name: str, placeholder: ModuleType | None) -> Iterator[None]:
    """`placeholder` in ``sys.modules[name]`` while the block imports (None:
    the module cannot be imported); the entry is gone afterwards."""
    sys.modules[name] = placeholder  # type: ignore[assignment]
    try:
        yield
    finally:
        sys.modules.pop(name, None)


if "httpx" not in sys.modules and _CLI not in sys.modules:
    with _standing_in(_CLI, ModuleType(_CLI)):
        import httpx

import httpx as httpx  # noqa: E402  (re-exported)

__all__ = ["httpx", "import_httpcore_without_trio"]


def import_httpcore_without_trio() -> None:
    """Import httpcore with trio hidden, unless httpcore or trio is loaded
    already; for a process's entry point only (module docstring)."""
    if {"httpcore", _TRIO} & sys.modules.keys():
        return
    with _standing_in(_TRIO, None):
        import httpcore  # noqa: F401
