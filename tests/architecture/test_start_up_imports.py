"""What the suite's child processes import at start-up (issue 11: the suite's
own tests start hundreds of them, so a module they never use costs time)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _modules_after(statement: str, *names: str) -> dict[str, bool]:
    """Which of `names` a fresh interpreter has loaded after `statement`."""
    probe = f"import sys; {statement}; print(*[n in sys.modules for n in {names!r}])"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    return dict(zip(names, (word == "True" for word in out), strict=True))


def test_the_reference_client_imports_httpx_without_its_command_line() -> None:
    loaded = _modules_after(
        "import reference.loop.client, httpx; assert httpx.AsyncClient",
        "httpx",
        "httpx._main",
    )
    assert loaded == {"httpx": True, "httpx._main": False}


def test_httpx_command_line_still_loads_when_asked_for() -> None:
    loaded = _modules_after(
        "import reference.loop.client, httpx._main; assert httpx._main.main",
        "httpx._main",
    )
    assert loaded == {"httpx._main": True}


def test_serving_the_fake_does_not_import_httpx() -> None:
    loaded = _modules_after(
        "import fakes.server, fakes.cli", "httpx", "fakes.transport"
    )
    assert loaded == {"httpx": False, "fakes.transport": False}


@pytest.mark.parametrize(
    ("statement", "loads_transport"),
    [
        ("from fakes import FakeTransport, route_provider", True),
        ("from fakes import *; assert FakeTransport and route_provider", True),
        (
            "import fakes as f; assert f.transport.route_provider is f.route_provider",
            True,
        ),
        (
            "import fakes as f; assert {'transport', 'route_provider'} <= {*dir(f)}",
            False,
        ),
    ],
)
def test_the_fake_transport_is_still_reached_as_before(
    statement: str, loads_transport: bool
) -> None:
    """Each spelling works (a failing statement fails `_modules_after`)."""
    assert _modules_after(statement, "fakes.transport") == {
        "fakes.transport": loads_transport
    }
