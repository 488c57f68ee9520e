"""The reference codec behind the adapter protocol (docs/adapter-protocol.md).

``python -m reference.adapter`` speaks newline-delimited JSON-RPC 2.0 on
stdin/stdout: one request object per line in, one response object per line
out, flushed. `dispatch` is the same protocol as a pure function, which the
suite also uses in-process.

Errors never end the process: malformed lines, unknown methods, bad params,
oversized lines and internal failures each get a JSON-RPC error response
and the loop goes on until ``shutdown`` or end of input.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO, Any

from reference.errors import CodecError
from reference.header import (
    apply_header_delta,
    canonical_header,
    diff_header,
    fold_request_header,
    header_equals,
)
from reference.json_values import JsonObject, canonical_json
from reference.jsonl import parse_line
from reference.revisions import LATEST, Revision
from reference.writer import record_header

PROTOCOL_VERSION = 1
NAME = "reqfold-reference"
VERSION = "0.1.0"
MAX_LINE_BYTES = 64 * 1024 * 1024

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
REJECTED = -32000
"""The implementation rejects the input as the spec requires (a corrupt log...)."""


class RpcError(Exception):
    """A JSON-RPC error to send back: code, message and optional data."""

    def __init__(self, code: int, message: str, data: JsonObject | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _param(params: JsonObject, name: str, *, optional: bool = False) -> Any:
    if name not in params:
        if optional:
            return None
        raise RpcError(INVALID_PARAMS, f"missing param {name!r}")
    return params[name]


def _revision(params: JsonObject) -> Revision:
    name = params.get("revision", LATEST.value)
    try:
        return Revision(name)
    except ValueError:
        raise RpcError(INVALID_PARAMS, f"unknown revision {name!r}") from None


def _initialize(params: JsonObject) -> JsonObject:
    version = params.get("protocolVersion")
    if version != PROTOCOL_VERSION:
        raise RpcError(
            INVALID_PARAMS,
            f"unsupported protocolVersion {version!r}; this adapter speaks"
            f" {PROTOCOL_VERSION}",
        )
    return {
        "name": NAME,
        "version": VERSION,
        "language": "python",
        "revisions": [revision.value for revision in Revision],
        "capabilities": ["codec"],
    }


def _canonical(params: JsonObject) -> JsonObject:
    return {"header": canonical_header(_param(params, "header"), _revision(params))}


def _equals(params: JsonObject) -> JsonObject:
    a, b = _param(params, "a"), _param(params, "b")
    return {"equal": header_equals(a, b, _revision(params))}


def _diff(params: JsonObject) -> JsonObject:
    prev, next_ = _param(params, "prev"), _param(params, "next")
    return {"delta": diff_header(prev, next_, _revision(params))}


def _apply(params: JsonObject) -> JsonObject:
    prev, delta = _param(params, "prev"), _param(params, "delta")
    return {"header": apply_header_delta(prev, delta, _revision(params))}


def _fold(params: JsonObject) -> JsonObject:
    events = _param(params, "events")
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise RpcError(INVALID_PARAMS, "events must be an array of objects")
    start = _param(params, "from", optional=True)
    return {"header": fold_request_header(events, start, _revision(params))}


def _record(params: JsonObject) -> JsonObject:
    baseline = _param(params, "baseline")
    logged = _param(params, "loggedThisInstance")
    if not isinstance(logged, bool):
        raise RpcError(INVALID_PARAMS, "loggedThisInstance must be a boolean")
    header = _param(params, "header")
    return {"event": record_header(baseline, logged, header, _revision(params))}


METHODS: dict[str, Callable[[JsonObject], JsonObject]] = {
    "initialize": _initialize,
    "codec/canonical": _canonical,
    "codec/equals": _equals,
    "codec/diff": _diff,
    "codec/apply": _apply,
    "codec/fold": _fold,
    "codec/record": _record,
}


def dispatch(method: str, params: JsonObject) -> JsonObject:
    """Run one codec method; raises `RpcError` for every kind of failure."""
    handler = METHODS.get(method)
    if handler is None:
        raise RpcError(METHOD_NOT_FOUND, f"unknown method {method!r}")
    try:
        return handler(params)
    except CodecError as error:
        raise RpcError(
            REJECTED,
            str(error),
            {
                key: value
                for key, value in (
                    ("kind", error.kind),
                    ("rule", error.rule),
                    ("seq", error.seq),
                )
                if value is not None
            },
        ) from None
    except RpcError:
        raise
    except (TypeError, KeyError, AttributeError, ValueError) as error:
        raise RpcError(INVALID_PARAMS, f"invalid params: {error}") from None


def _response(
    request_id: Any, *, result: Any = None, error: RpcError | None = None
) -> str:
    message: JsonObject = {"jsonrpc": "2.0", "id": request_id}
    if error is None:
        message["result"] = result
    else:
        body: JsonObject = {"code": error.code, "message": error.message}
        if error.data is not None:
            body["data"] = error.data
        message["error"] = body
    return canonical_json(message) + "\n"


def handle_line(line: bytes) -> tuple[str | None, bool]:
    """Answer one input line; returns (response text or None, shutdown?)."""
    try:
        request = parse_line(line.decode("utf-8"))
    except (ValueError, RecursionError) as error:
        return _response(
            None, error=RpcError(PARSE_ERROR, f"parse error: {error}")
        ), False
    if not (
        isinstance(request, dict)
        and request.get("jsonrpc") == "2.0"
        and isinstance(request.get("method"), str)
        and isinstance(request.get("params", {}), dict)
    ):
        request_id = request.get("id") if isinstance(request, dict) else None
        return _response(
            request_id, error=RpcError(INVALID_REQUEST, "invalid request")
        ), False
    request_id = request.get("id")
    is_notification = "id" not in request
    method: str = request["method"]
    if method == "shutdown":
        return (None if is_notification else _response(request_id, result=None)), True
    try:
        result = dispatch(method, request.get("params", {}))
        text = _response(request_id, result=result)
    except RpcError as error:
        text = _response(request_id, error=error)
    except RecursionError:
        text = _response(
            request_id, error=RpcError(INVALID_PARAMS, "input nested too deeply")
        )
    except Exception as error:  # an implementation bug; say so and keep serving
        text = _response(request_id, error=RpcError(INTERNAL_ERROR, repr(error)))
    return (None if is_notification else text), False


def serve(stdin: IO[bytes], stdout: IO[str]) -> int:
    """Serve requests from `stdin` until ``shutdown`` or end of input."""
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return 0
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while (rest := stdin.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                pass
            stdout.write(
                _response(
                    None,
                    error=RpcError(
                        INVALID_REQUEST,
                        f"request line longer than {MAX_LINE_BYTES} bytes",
                    ),
                )
            )
            stdout.flush()
            continue
        if not line.strip():
            continue
        text, stop = handle_line(line)
        if text is not None:
            stdout.write(text)
            stdout.flush()
        if stop:
            return 0


def main() -> int:
    """Entry point of ``python -m reference.adapter``."""
    return serve(sys.stdin.buffer, sys.stdout)


if __name__ == "__main__":
    raise SystemExit(main())
