"""`python -m reqfold.reference.adapter`: the codec over newline-delimited JSON-RPC.

These tests spawn the adapter as a real child process and talk to it over
its pipes, as an implementation in another language would be driven.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from reqfold.conformance.adapters.connection import StdioConnection

pytestmark = pytest.mark.slow


ADAPTER = [sys.executable, "-m", "reqfold.reference.adapter"]


@pytest.fixture
def adapter() -> Iterator[StdioConnection]:
    running = StdioConnection(ADAPTER, timeout=30)
    yield running
    running.kill()


def test_initialize_declares_protocol_revisions_and_capabilities(
    adapter: StdioConnection,
) -> None:
    result = adapter.request("initialize", {"protocolVersion": 1})["result"]
    assert result["name"] == "reqfold-reference"
    assert result["revisions"] == [
        "header-events",
        "request-messages",
        "session-prefix",
    ]
    assert "codec" in result["capabilities"]


def test_an_unsupported_protocol_version_is_an_invalid_params_error(
    adapter: StdioConnection,
) -> None:
    reply = adapter.request("initialize", {"protocolVersion": 99})
    assert reply["error"]["code"] == -32602
    assert "99" in reply["error"]["message"]


@pytest.mark.spec("DELTA-2", "FOLD-2")
def test_codec_methods_answer_and_a_corrupt_log_is_an_error_response(
    adapter: StdioConnection,
) -> None:
    diff = adapter.request(
        "codec/diff",
        {"prev": {"config": {"model": "a"}}, "next": {"config": {"model": "b"}}},
    )
    assert diff["result"] == {"delta": {"config": {"model": "b"}}}
    equal = adapter.request(
        "codec/diff",
        {
            "prev": {"config": {"model": "a"}},
            "next": {"config": {"model": "a"}, "system": ""},
        },
    )
    assert equal["result"] == {"delta": None}
    corrupt = adapter.request(
        "codec/fold",
        {"events": [{"type": "request/header-delta", "seq": 3, "data": {}}]},
    )
    assert corrupt["error"]["code"] == -32000
    assert corrupt["error"]["data"] == {
        "kind": "delta-before-snapshot",
        "rule": "FOLD-2",
        "seq": 3,
    }


def test_the_revision_param_selects_the_header_fields(adapter: StdioConnection) -> None:
    header = {
        "config": {"model": "m"},
        "messageSuffix": [{"role": "user", "content": []}],
    }
    old = adapter.request(
        "codec/canonical", {"header": header, "revision": "request-messages"}
    )
    assert old["result"] == {"header": header}
    new = adapter.request("codec/canonical", {"header": header})
    assert new["error"]["data"]["kind"] == "malformed-header"
    unknown = adapter.request("codec/canonical", {"header": header, "revision": "r9"})
    assert unknown["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"{not json", -32700),
        (b"[1, 2]", -32600),
        (b'{"jsonrpc": "2.0", "id": 1}', -32600),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "codec/nope"}', -32601),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "codec/diff", "params": {}}', -32602),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "codec/fold",'
            b' "params": {"events": 5}}',
            -32602,
        ),
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "codec/canonical",'
            b' "params": {"header":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
            -32700,
        ),
    ],
    ids=[
        "parse-error",
        "not-an-object",
        "no-method",
        "unknown-method",
        "missing-params",
        "wrong-param-type",
        "deep-nesting",
    ],
)
def test_bad_input_gets_an_error_response_and_the_adapter_keeps_serving(
    adapter: StdioConnection, line: bytes, code: int
) -> None:
    reply = adapter.send_line(line)
    assert reply["error"]["code"] == code
    still_alive = adapter.request(
        "codec/equals",
        {"a": {"config": {"model": "m"}}, "b": {"config": {"model": "m"}}},
    )
    assert still_alive["result"] == {"equal": True}


def test_shutdown_answers_null_and_exits_zero(adapter: StdioConnection) -> None:
    reply = adapter.request("shutdown", {})
    assert reply["result"] is None
    adapter.end_input()
    assert adapter.wait() == 0


def test_end_of_input_exits_zero(adapter: StdioConnection) -> None:
    adapter.end_input()
    assert adapter.wait() == 0


@pytest.mark.parametrize(
    "line",
    [
        b'{"jsonrpc": "2.0", "id": 1e400, "method": "codec/nope"}',
        b'{"jsonrpc": "2.0", "id": "\\udc00", "method": "codec/nope"}',
        b'{"jsonrpc": "2.0", "id": "a\\ud800b", "method": "initialize"}',
        b'{"jsonrpc": "2.0", "id": true, "method": "codec/nope"}',
        b'{"jsonrpc": "2.0", "id": [1], "method": "codec/nope"}',
        b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "codec/nope"}',
        b'{"jsonrpc": "2.0", "id": 1e400}',
        b'[{"jsonrpc": "2.0", "id": "\\udc00", "method": "x"}]',
    ],
    ids=[
        "infinite-number",
        "lone-low-surrogate",
        "lone-high-surrogate",
        "boolean",
        "array",
        "object",
        "infinite-number-no-method",
        "inside-a-batch",
    ],
)
def test_an_id_that_cannot_be_echoed_gets_invalid_request_with_a_null_id(
    adapter: StdioConnection, line: bytes
) -> None:
    reply = adapter.send_line(line)
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600
    still_alive = adapter.request(
        "codec/equals",
        {"a": {"config": {"model": "m"}}, "b": {"config": {"model": "m"}}},
    )
    assert still_alive["result"] == {"equal": True}


@pytest.mark.spec("JSON-1")
@pytest.mark.parametrize(
    "header",
    [
        {"config": {"model": "\ud800"}},
        {"config": {"model": "m"}, "system": "a\udc00"},
        {"config": {"model": "m", "\ud800": 1}},
    ],
    ids=["value", "system", "key"],
)
def test_a_lone_surrogate_in_params_is_a_json_1_rejection_not_an_echo(
    adapter: StdioConnection, header: dict[str, Any]
) -> None:
    # as an escape (json.dumps): `request` writes UTF-8, which cannot hold one
    request = {"jsonrpc": "2.0", "id": 1, "method": "codec/canonical"}
    reply = adapter.send_line(
        json.dumps({**request, "params": {"header": header}}).encode()
    )
    assert reply["error"]["code"] == -32000
    assert reply["error"]["data"]["kind"] == "not-json-value"
    assert reply["error"]["data"]["rule"] == "JSON-1"
    assert adapter.request("codec/canonical", {"header": {"config": {"model": "m"}}})[
        "result"
    ] == {"header": {"config": {"model": "m"}}}


UNWRITABLE_RESULTS = {
    "nan": "{'equal': float('nan')}",
    "surrogate": "{'equal': '\\ud800'}",
    "not-json": "{'equal': {1, 2}}",
    "too-deep": "functools.reduce(lambda v, _: [v], range(100_000), 0)",
}


@pytest.mark.parametrize("result", UNWRITABLE_RESULTS.values(), ids=UNWRITABLE_RESULTS)
def test_a_result_that_cannot_be_written_is_an_internal_error_not_a_crash(
    result: str,
) -> None:
    serve_a_bug = (
        "import functools, sys\n"
        "from reqfold.reference.shells import adapter\n"
        f"adapter.METHODS['codec/equals'] = lambda params: {result}\n"
        "raise SystemExit(adapter.main())\n"
    )
    running = StdioConnection([sys.executable, "-c", serve_a_bug], timeout=30)
    try:
        reply = running.request("codec/equals", {"a": {}, "b": {}})
        assert reply["error"]["code"] == -32603
        assert running.request("shutdown", {})["result"] is None
        running.end_input()
        assert running.wait() == 0
    finally:
        running.kill()


def test_an_adapter_whose_stdout_is_gone_exits_without_a_traceback() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "reqfold.reference.adapter"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdout.close()
    request = b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}\n'
    _, err = process.communicate(request * 3, timeout=30)
    assert process.returncode == 1
    assert b"Traceback" not in err
    assert b"Exception ignored" not in err
    assert b"stdout" in err
