"""Talking to an implementation: over a child process's pipes, or in-process.

`StdioConnection` runs an adapter command and speaks newline-delimited
JSON-RPC 2.0 with it (docs/adapter-protocol.md): one request at a time,
each answered within a timeout, the echoed ``id`` checked. Two reader
threads keep stdout and stderr drained, so a chatty or stuck adapter can
never block the suite; a hung adapter is killed when its time is up.

`DirectConnection` serves the same protocol from the in-process reference,
for fast runs and for the suite's own tests.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import IO, Any, Protocol

from conformance.errors import (
    AdapterCrashed,
    AdapterProtocolError,
    AdapterStartupFailed,
    AdapterTimeout,
    VersionMismatch,
)
from conformance.vectors import encode_json
from reference.json_values import JsonObject

PROTOCOL_VERSION = 1
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
STDERR_TAIL_LINES = 20


class Connection(Protocol):
    """Something that answers adapter-protocol requests."""

    def initialize(self) -> JsonObject:
        """Send ``initialize``; returns its result."""
        ...

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Send one request; returns the whole response (``result`` or ``error``)."""
        ...

    def close(self) -> None:
        """Send ``shutdown`` if possible and release the implementation."""
        ...


class DirectConnection:
    """The in-process reference behind the `Connection` interface."""

    def __init__(self) -> None:
        from reference import adapter

        self._adapter = adapter

    def initialize(self) -> JsonObject:
        """Initialize the in-process reference."""
        return self._adapter.dispatch(
            "initialize", {"protocolVersion": PROTOCOL_VERSION}
        )

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Answer one request the way the stdio adapter would."""
        try:
            return {"result": self._adapter.dispatch(method, params)}
        except self._adapter.RpcError as error:
            body: JsonObject = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            return {"error": body}

    def close(self) -> None:
        """Nothing to release."""


class StdioConnection:
    """An adapter child process spoken to over stdin/stdout.

    Args:
        argv: the command that starts the adapter.
        timeout: seconds each request may take before the adapter is
            declared hung and killed.
    """

    def __init__(self, argv: Sequence[str], *, timeout: float = 10.0) -> None:
        self.argv = list(argv)
        self.timeout = timeout
        self._next_id = 0
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        try:
            self._process = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as error:
            raise AdapterStartupFailed(
                f"cannot start {' '.join(self.argv)!r}: {error.strerror or error}"
            ) from None
        self._threads = [
            threading.Thread(target=self._pump_stdout, daemon=True),
            threading.Thread(target=self._pump_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    # ------------------------------------------------------------ threads

    def _pump_stdout(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        while True:
            line = stream.readline(MAX_RESPONSE_BYTES + 1)
            if not line:
                self._lines.put(None)
                return
            self._lines.put(line)

    def _pump_stderr(self) -> None:
        stream: IO[bytes] | None = self._process.stderr
        assert stream is not None
        for raw in iter(stream.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip("\n"))

    # ------------------------------------------------------------ protocol

    @property
    def stderr_tail(self) -> str:
        """The last lines the adapter wrote to stderr."""
        return "\n".join(self._stderr)

    def initialize(self) -> JsonObject:
        """Send ``initialize``; raises `AdapterStartupFailed` or `VersionMismatch`."""
        try:
            response = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION})
        except (AdapterCrashed, AdapterTimeout, AdapterProtocolError) as error:
            self.kill()
            raise AdapterStartupFailed(
                f"initialize failed: {error.detail}", stderr_tail=self.stderr_tail
            ) from None
        if "error" in response:
            self.kill()
            message = response["error"].get("message", "")
            raise VersionMismatch(
                f"the adapter refused protocol version {PROTOCOL_VERSION}: {message}",
                stderr_tail=self.stderr_tail,
            )
        result = response["result"]
        if not isinstance(result, dict) or not isinstance(
            result.get("revisions"), list
        ):
            self.kill()
            raise AdapterStartupFailed(
                "initialize result must be an object with a revisions array",
                stderr_tail=self.stderr_tail,
            )
        return result

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Send one request and wait for its response."""
        self._next_id += 1
        request_id = self._next_id
        message = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": method,
            "params": params,
        }
        self._send(encode_json(message).encode("utf-8") + b"\n")
        line = self._receive(method)
        return self._parse_response(line, request_id)

    def _send(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
            stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crashed("the adapter closed its stdin") from None

    def _receive(self, method: str) -> bytes:
        try:
            line = self._lines.get(timeout=self.timeout)
        except queue.Empty:
            self.kill()
            raise AdapterTimeout(
                f"no answer to {method} within {self.timeout:g}s;"
                " the adapter was killed",
                stderr_tail=self.stderr_tail,
            ) from None
        if line is None:
            raise self._crashed(f"the adapter exited while answering {method}")
        if len(line) > MAX_RESPONSE_BYTES:
            self.kill()
            raise AdapterProtocolError(
                f"response line longer than {MAX_RESPONSE_BYTES} bytes",
                stderr_tail=self.stderr_tail,
            )
        return line

    def _parse_response(self, line: bytes, request_id: int) -> JsonObject:
        try:
            response: Any = json.loads(line)
        except (ValueError, RecursionError):
            raise AdapterProtocolError(
                f"not a JSON line: {line[:120]!r}", stderr_tail=self.stderr_tail
            ) from None
        if not isinstance(response, dict) or response.get("jsonrpc") != "2.0":
            raise AdapterProtocolError(
                f"not a JSON-RPC 2.0 response: {line[:120]!r}",
                stderr_tail=self.stderr_tail,
            )
        if response.get("id") != request_id:
            raise AdapterProtocolError(
                f"response id {response.get('id')!r} does not echo request id"
                f" {request_id}",
                stderr_tail=self.stderr_tail,
            )
        has_result, error = "result" in response, response.get("error")
        if has_result == (error is not None) or (
            error is not None
            and not (isinstance(error, dict) and isinstance(error.get("code"), int))
        ):
            raise AdapterProtocolError(
                "a response needs exactly one of result or error {code, message}",
                stderr_tail=self.stderr_tail,
            )
        return response

    def _crashed(self, message: str) -> AdapterCrashed:
        try:
            code = self._process.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            code = self._process.returncode
        return AdapterCrashed(
            f"{message} (exit status {code})", stderr_tail=self.stderr_tail
        )

    # ------------------------------------------------------------ lifecycle

    @property
    def alive(self) -> bool:
        """True while the adapter process runs."""
        return self._process.poll() is None

    def kill(self) -> None:
        """End the adapter at once."""
        if self.alive:
            self._process.kill()
        self._process.wait()
        self._close_pipes()

    def close(self) -> None:
        """Ask the adapter to shut down; kill it if it does not."""
        if self.alive:
            with contextlib.suppress(
                AdapterCrashed, AdapterTimeout, AdapterProtocolError
            ):
                self.request("shutdown", {})
            stdin = self._process.stdin
            if stdin is not None and not stdin.closed:
                with contextlib.suppress(OSError):
                    stdin.close()
            try:
                self._process.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for thread in self._threads:
            thread.join(timeout=self.timeout)
        for stream in (self._process.stdin, self._process.stdout, self._process.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()


ConnectionFactory = Callable[[], Connection]
