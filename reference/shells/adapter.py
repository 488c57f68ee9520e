"""The reference codec behind the adapter protocol (docs/adapter-protocol.md).

``python -m reqfold.reference.adapter`` speaks newline-delimited JSON-RPC 2.0 on
stdin/stdout: one request object per line in, one response object per line
out, flushed. `dispatch` is the same protocol as a pure function, which the
suite also uses in-process.

Errors never end the process: malformed lines, unknown methods, bad params,
oversized lines, ids that cannot be echoed and internal failures (even a
result that cannot be written as JSON) each get a JSON-RPC error response,
and the loop goes on until ``shutdown`` or end of input. Only losing stdout
ends it early: then nobody can be answered, and it exits with status 1.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO, Any

from reqfold.reference.errors import CodecError, NotJsonValue
from reqfold.reference.header import (
    apply_header_delta,
    canonical_header,
    diff_header,
    fold_request_header,
    header_equals,
)
from reqfold.reference.json_values import (
    JsonObject,
    canonical_json,
    check_json_value,
    escape_lone_surrogates,
    parse_json,
)
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.writer import record_header

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
        "capabilities": ["codec", "strict"],
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


_LAST_RESORT = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32603,'
    b'"message":"internal error: the response could not be written"}}\n'
)


def _printable(text: str, limit: int = 500) -> str:
    """`text` cut to `limit` characters, lone surrogates spelt as escapes."""
    if len(text) > limit:
        text = text[:limit] + "..."
    return escape_lone_surrogates(text)


def frame(
    request_id: Any, *, result: Any = None, error: RpcError | None = None
) -> bytes:
    """The response line as UTF-8 bytes; never raises.

    A response that cannot be written (a result that is not JSON, nested
    too deeply, holding a lone surrogate...) becomes an internal error for
    the same id; if even that fails, an internal error with ``id: null``.
    """
    if error is not None:  # messages quote input: spell lone surrogates out
        message = escape_lone_surrogates(error.message)
        error = RpcError(error.code, message, error.data)
    try:
        return _response(request_id, result=result, error=error).encode("utf-8")
    except Exception as failure:  # a bug behind the handler: say so, keep serving
        reason = _printable(f"{type(failure).__name__}: {failure}")
        internal = RpcError(
            INTERNAL_ERROR,
            f"internal error: the response could not be written: {reason}",
        )
    for fallback_id in (request_id, None):
        try:
            return _response(fallback_id, error=internal).encode("utf-8")
        except Exception:  # the id itself cannot be written
            continue
    return _LAST_RESORT


NO_ID: Any = object()
"""The id of a request without one (a notification, or not a request)."""


def _loads(text: str) -> Any:
    """Parse one request line strictly (`parse_json`), one error type out."""
    try:
        return parse_json(text)
    except RecursionError:
        raise ValueError("nesting too deep to parse") from None


def _id_problem(request_id: object) -> str | None:
    """Why `request_id` cannot be echoed in a response, or None if it can.

    A JSON-RPC id is a string, a number or null (a boolean is not a number);
    it must also survive being written back: a finite number, Unicode text.
    """
    if request_id is None:
        return None
    if isinstance(request_id, bool) or not isinstance(request_id, str | int | float):
        return "the id must be a string, a number or null"
    if isinstance(request_id, float) and not math.isfinite(request_id):
        return "the id is a number too large for a double"
    if isinstance(request_id, str):
        try:
            check_json_value(request_id, what="the id")
        except NotJsonValue as problem:
            return problem.detail
    return None


def _invalid(reason: str) -> bytes:
    return frame(None, error=RpcError(INVALID_REQUEST, f"invalid request: {reason}"))


@dataclass(frozen=True, slots=True)
class Request:
    """A well-formed JSON-RPC request (or notification) read from one line."""

    id: Any
    """The id to echo; `NO_ID` for a notification, which gets no response."""
    method: str
    params: JsonObject

    @property
    def is_notification(self) -> bool:
        """Whether the request has no id (nothing may be sent back)."""
        return self.id is NO_ID


def parse_request(line: bytes) -> Request | bytes:
    """The request on `line`, or the error response line when there is none.

    Never raises: a line that is not JSON, not a request object or holds an
    id that cannot be echoed gets its error response here.
    """
    try:
        return _parse_request(line)
    except Exception as failure:  # a bug in the envelope handling itself
        reason = _printable(f"{type(failure).__name__}: {failure}")
        return frame(None, error=RpcError(INTERNAL_ERROR, reason))


def _parse_request(line: bytes) -> Request | bytes:
    try:
        request = _loads(line.decode("utf-8"))
    except ValueError as error:  # UnicodeDecodeError is a ValueError too
        reason = _printable(str(error))
        return frame(None, error=RpcError(PARSE_ERROR, f"parse error: {reason}"))
    if not isinstance(request, dict):
        return _invalid("not a JSON-RPC request object")
    request_id = request.get("id", NO_ID)
    if request_id is not NO_ID and (problem := _id_problem(request_id)) is not None:
        return _invalid(problem)
    method = request.get("method")
    params = request.get("params", {})
    if not (
        request.get("jsonrpc") == "2.0"
        and isinstance(method, str)
        and isinstance(params, dict)
    ):
        return frame(
            None if request_id is NO_ID else request_id,
            error=RpcError(INVALID_REQUEST, "invalid request"),
        )
    return Request(request_id, method, params)


def as_rpc_error(error: Exception) -> RpcError:
    """The error response for a handler's exception.

    An `RpcError` stands as raised; input nested too deeply to process is
    bad params; anything else is an implementation bug (internal error).
    """
    if isinstance(error, RpcError):
        return error
    if isinstance(error, RecursionError):
        return RpcError(INVALID_PARAMS, "input nested too deeply")
    return RpcError(INTERNAL_ERROR, _printable(f"{type(error).__name__}: {error}"))


def answer(
    request: Request, *, result: Any = None, error: RpcError | None = None
) -> bytes | None:
    """The response line for `request` (None for a notification); never raises."""
    if request.is_notification:
        return None
    return frame(request.id, result=result, error=error)


def handle_line(line: bytes) -> tuple[bytes | None, bool]:
    """Answer one input line; returns (response line or None, shutdown?).

    Never raises: whatever goes wrong becomes an error response.
    """
    try:
        return _handle(line)
    except Exception as failure:  # a bug in the envelope handling itself
        reason = _printable(f"{type(failure).__name__}: {failure}")
        return frame(None, error=RpcError(INTERNAL_ERROR, reason)), False


def _handle(line: bytes) -> tuple[bytes | None, bool]:
    request = parse_request(line)
    if isinstance(request, bytes):
        return request, False
    if request.method == "shutdown":
        return answer(request, result=None), True
    try:
        result = dispatch(request.method, request.params)
    except Exception as error:  # RpcError, or a bug: say so and keep serving
        return answer(request, error=as_rpc_error(error)), False
    return answer(request, result=result), False


class LineTooLong(Exception):
    """An input line over `MAX_LINE_BYTES`; it was read to its end and dropped."""

    def response(self) -> bytes:
        """The error response the line gets (``id: null``: it was not read)."""
        return frame(
            None,
            error=RpcError(
                INVALID_REQUEST, f"request line longer than {MAX_LINE_BYTES} bytes"
            ),
        )


def read_line(stdin: IO[bytes]) -> bytes | None:
    """The next input line, or None at end of input.

    Reads at most `MAX_LINE_BYTES` (plus the newline) into memory: a longer
    line is consumed to its end and raises `LineTooLong`.
    """
    line = stdin.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        while (rest := stdin.readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
            pass
        raise LineTooLong
    return line


class _OutputGone(Exception):
    """stdout cannot be written any more: nobody can be answered."""


def _write(stdout: IO[bytes], data: bytes) -> None:
    try:
        stdout.write(data)
        stdout.flush()
    except (OSError, ValueError) as error:
        raise _OutputGone(str(error)) from None


def serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Serve requests from `stdin` until ``shutdown`` or end of input.

    Returns the exit status: 0, or 1 when stdout can no longer be written.
    """
    try:
        return _serve(stdin, stdout)
    except _OutputGone as gone:
        sys.stderr.write(
            f"reqfold.reference.adapter: stdout is gone ({gone}); exiting\n"
        )
        return 1


def _serve(stdin: IO[bytes], stdout: IO[bytes]) -> int:
    while True:
        try:
            line = read_line(stdin)
        except LineTooLong as too_long:
            _write(stdout, too_long.response())
            continue
        if line is None:
            return 0
        if not line.strip():
            continue
        text, stop = handle_line(line)
        if text is not None:
            _write(stdout, text)
        if stop:
            return 0


def main() -> int:
    """Entry point of ``python -m reqfold.reference.adapter``."""
    status = serve(sys.stdin.buffer, sys.stdout.buffer)
    if status != 0:
        # Nothing more can reach stdout; stop the interpreter from trying to
        # flush it again at exit (which would print "Exception ignored").
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
    return status


if __name__ == "__main__":
    raise SystemExit(main())
