"""What the suite's child processes import at start-up (issue 11: the suite's
own tests start hundreds of them, so a module they never use costs time).

Each test that asks a fresh interpreter is marked slow: it starts a
process, which the developer's loop (``-m "not slow"``) leaves to the whole
suite."""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from cache_sessions import Session

from reqfold.conformance.check import cli as check_cli

TRIO_INSTALLED = importlib.util.find_spec("trio") is not None
"""httpcore imports trio only where it is installed (it is on the project's
machine; nothing reqfold depends on brings it)."""

ASK_A_CLOSED_PORT = """
import asyncio
from reqfold.reference.loop.abort import AbortSignal
from reqfold.reference.loop.client import ChatCompletionsClient
from reqfold.reference.loop.errors import ProviderError
from reqfold.reference.loop.frozen_request import FrozenRequest

request = FrozenRequest.build(
    turn=1, step=1, boundary=0, header={"config": {"model": "m"}},
    messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
)

async def ask() -> None:
    async with ChatCompletionsClient(base_url="http://127.0.0.1:9") as client:
        try:
            await client.complete(request, AbortSignal())
        except ProviderError as error:
            assert "ConnectError" in str(error), error
        else:
            raise AssertionError("port 9 answered")

asyncio.run(ask())
"""
"""The reference client sends one request over the network (its own httpx
transport, as in a harness adapter process) to a port nobody serves."""


def _modules_after(statement: str, *names: str) -> dict[str, bool]:
    """Which of `names` a fresh interpreter has loaded after `statement`."""
    probe = f"import sys; {statement}; print(*[n in sys.modules for n in {names!r}])"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.split()
    return dict(zip(names, (word == "True" for word in out), strict=True))


@pytest.mark.slow  # a fresh interpreter per test
def test_the_reference_client_imports_httpx_without_its_command_line() -> None:
    loaded = _modules_after(
        "import reqfold.reference.loop.client, httpx; assert httpx.AsyncClient",
        "httpx",
        "httpx._main",
    )
    assert loaded == {"httpx": True, "httpx._main": False}


@pytest.mark.slow  # a fresh interpreter per test
def test_httpx_command_line_still_loads_when_asked_for() -> None:
    loaded = _modules_after(
        "import reqfold.reference.loop.client, httpx._main; assert httpx._main.main",
        "httpx._main",
    )
    assert loaded == {"httpx._main": True}


HARNESS_ADAPTER = """
import os, sys
sys.stdin = open(os.devnull)  # no request: the adapter starts and ends
from reqfold.reference.shells.harness_adapter import main
assert main([]) == 0
"""
"""`python -m reqfold.reference.harness_adapter`'s entry point, given no request."""


@pytest.mark.slow  # a fresh interpreter per test
def test_the_harness_adapters_network_transport_leaves_trio_unloaded() -> None:
    loaded = _modules_after(
        f"exec({HARNESS_ADAPTER!r}); exec({ASK_A_CLOSED_PORT!r})", "httpcore", "trio"
    )
    assert loaded == {"httpcore": True, "trio": False}


@pytest.mark.slow  # a fresh interpreter per test
@pytest.mark.skipif(not TRIO_INSTALLED, reason="trio is not installed here")
def test_a_program_using_the_reference_client_can_use_httpx_under_trio_after() -> None:
    # only the adapter's entry point hides trio: httpcore remembers its absence
    under_trio = """
import httpx, trio

async def ask() -> None:
    async with httpx.AsyncClient() as client:
        try:
            await client.get("http://127.0.0.1:9")
        except httpx.ConnectError:
            return
    raise AssertionError("port 9 answered")

trio.run(ask)
"""
    loaded = _modules_after(
        f"exec({ASK_A_CLOSED_PORT!r}); exec({under_trio!r})", "httpcore", "trio"
    )
    assert loaded == {"httpcore": True, "trio": True}


@pytest.mark.slow  # a fresh interpreter per test
@pytest.mark.skipif(not TRIO_INSTALLED, reason="trio is not installed here")
def test_a_trio_loaded_before_the_harness_adapter_is_the_one_httpcore_uses() -> None:
    loaded = _modules_after(
        f"import trio; exec({HARNESS_ADAPTER!r}); exec({ASK_A_CLOSED_PORT!r});"
        " import httpcore._synchronization as s; assert s.trio is trio",
        "trio",
    )
    assert loaded == {"trio": True}


@pytest.mark.slow  # a fresh interpreter per test
def test_serving_the_fake_does_not_import_httpx() -> None:
    loaded = _modules_after(
        "import reqfold.fakes.server, reqfold.fakes.cli",
        "httpx",
        "reqfold.fakes.transport",
    )
    assert loaded == {"httpx": False, "reqfold.fakes.transport": False}


VECTORS_ONLY = """
import contextlib, io
from reqfold.conformance.cli import main

with contextlib.redirect_stdout(io.StringIO()):
    status = main(
        ["run", "--impl", "reference", "--only", "vectors"]
        + ["--revision", "session-prefix"]
    )
assert status == 0, status
"""


@pytest.mark.slow  # a fresh interpreter per test
def test_a_reqfold_run_that_plays_no_scenario_imports_no_fake_and_no_checks() -> None:
    names = (
        "uvicorn",
        "reqfold.fakes.server",
        "fakes",
        "reqfold.conformance.harness.checks",
    )
    loaded = _modules_after(f"exec({VECTORS_ONLY!r})", *names)
    assert loaded == dict.fromkeys(names, False)


@pytest.mark.slow  # a fresh interpreter per test
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
    assert _modules_after(statement, "reqfold.fakes.transport") == {
        "reqfold.fakes.transport": loads_transport
    }


CHECK = """
import contextlib, io
from reqfold.conformance.cli import main

with contextlib.redirect_stdout(io.StringIO()):
    status = main({argv!r})
assert status == {status}, status
"""
"""``reqfold check ARGS`` in a fresh interpreter, with the status it must give."""

CACHE_JUDGEMENT = (
    "reqfold.fakes",
    "reqfold.conformance.cache.judge",
    "reqfold.conformance.cache.prompts",
)
"""The fake and the judgement's modules that import it; the judgement's
package itself is light (its names come lazily) and declares the options."""


@pytest.mark.slow  # a fresh interpreter per test
def test_checking_a_log_imports_neither_the_fake_nor_the_cache_judgement(
    tmp_path: Path,
) -> None:
    log = tmp_path / "session.jsonl"
    log.write_text("{}\n", encoding="utf-8")  # breaks JSONL-1: status 1
    for argv in (
        ["check", str(log)],
        [
            "check",
            str(log),
            "--strict",
            "--format=json",
            "--revision",
            "session-prefix",
        ],
    ):
        statement = CHECK.format(argv=argv, status=1)
        loaded = _modules_after(f"exec({statement!r})", *CACHE_JUDGEMENT)
        assert loaded == dict.fromkeys(CACHE_JUDGEMENT, False)


@pytest.mark.slow  # a fresh interpreter per test
def test_a_capture_judged_alone_imports_the_cache_judgement_then(
    tmp_path: Path,
) -> None:
    session = Session()
    session.turn("turn 0")
    session.turn("turn 1")
    capture = tmp_path / "requests.jsonl"
    capture.write_text("\n".join(session.lines()) + "\n", encoding="utf-8")
    for argv in (
        ["check", "--requests", str(capture)],
        ["check", "--requests", str(capture), "--fail-on", "nonce"],
    ):
        statement = CHECK.format(argv=argv, status=0)
        loaded = _modules_after(f"exec({statement!r})", *CACHE_JUDGEMENT)
        assert loaded == dict.fromkeys(CACHE_JUDGEMENT, True)


def test_the_check_command_declares_the_cache_options_without_the_fake() -> None:
    statement = (
        "import argparse; from reqfold.conformance.check import cli; "
        "p = argparse.ArgumentParser(); cli.add_arguments(p); "
        "assert '--fail-on' in p._option_string_actions"
    )
    loaded = _modules_after(statement, *CACHE_JUDGEMENT)
    assert loaded == dict.fromkeys(CACHE_JUDGEMENT, False)


def test_a_log_check_parses_to_the_cache_options_defaults() -> None:
    parser = argparse.ArgumentParser()
    check_cli.add_arguments(parser)
    parsed = vars(parser.parse_args(["a.jsonl", "--strict"]))
    assert parsed["logs"] == ["a.jsonl"]
    assert parsed["strict"] is True
    assert (parsed["fail_on"], parsed["process_start"], parsed["price"]) == (
        (),
        [],
        None,
    )
