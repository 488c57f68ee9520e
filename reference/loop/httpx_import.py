"""httpx, imported without its command line; its network transport without trio.

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

httpx imports httpcore, its network transport, when a client without a
transport of its own is made, and httpcore imports trio whenever trio is
installed, to run under trio as well: about 0.1 s of CPU and an
``ldconfig`` child process at every start of a harness adapter that runs
on asyncio only (where trio is installed, as on the project's machine).
`async_client` makes such a client with trio hidden while httpcore
imports, unless httpcore or trio is loaded already; httpcore in that
process then runs under asyncio (and anyio) only, as the reference loop
does. ``import trio`` works afterwards as before; the placeholder is there
only while httpcore imports, as the one above.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any

_CLI = "httpx._main"
_TRIO = "trio"

if "httpx" not in sys.modules and _CLI not in sys.modules:
    sys.modules[_CLI] = ModuleType(_CLI)
    try:
        import httpx
    finally:
        del sys.modules[_CLI]

import httpx as httpx  # noqa: E402  (re-exported)

__all__ = ["async_client", "httpx"]


def async_client(
    *, transport: httpx.AsyncBaseTransport | None, **options: Any
) -> httpx.AsyncClient:
    """``httpx.AsyncClient(transport=transport, **options)``; without a
    transport, httpcore is imported first without trio (module docstring)."""
    if transport is None and not {"httpcore", _TRIO} & sys.modules.keys():
        sys.modules[_TRIO] = None  # type: ignore[assignment]
        try:
            import httpcore  # noqa: F401
        finally:
            del sys.modules[_TRIO]
    return httpx.AsyncClient(transport=transport, **options)
