"""httpx, imported without its command line.

httpx's package imports its command-line tool (click, pygments, rich)
whenever rich is installed, which costs a process about 0.1 s of start-up
(a third of the reference harness adapter's) for code the client never
runs. Imported through here, httpx finds its ``_main`` module already
present without ``main`` and falls back to the stub it keeps for when its
CLI's dependencies are missing. So in such a process ``httpx.main`` is that
stub (it says the CLI is not installed; nothing in reqfold calls it), while
``import httpx._main`` still loads the real CLI. The placeholder is in
``sys.modules`` only while httpx's package imports, under the import
lock; a thread importing ``httpx._main`` at that very moment would fail.
"""

from __future__ import annotations

import sys
from types import ModuleType

_CLI = "httpx._main"

if "httpx" not in sys.modules and _CLI not in sys.modules:
    sys.modules[_CLI] = ModuleType(_CLI)
    try:
        import httpx
    finally:
        del sys.modules[_CLI]

import httpx as httpx  # noqa: E402  (re-exported)

__all__ = ["httpx"]
