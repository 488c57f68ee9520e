"""The reference in process, behind the same interface as a child process.

`DirectConnection` answers the codec methods (part 1 of
docs/adapter-protocol.md) by calling `reqfold.reference.shells.adapter.dispatch`.
`InProcessHarness` runs `reqfold.reference.shells.harness_adapter.HarnessServer` on an
asyncio event loop in a thread of its own and speaks to it with plain
calls: a request is a coroutine run on that loop, a notification goes
through a queue. It answers what ``python -m reqfold.reference.harness_adapter``
would over stdio (an unexpected exception is a ``-32603`` answer), minus
the framing and the JSON round trip, so the suite can run the reference
fast (``reqfold run --impl reference``).
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from typing import Any

from reqfold.conformance.adapters.connection import PROTOCOL_VERSION
from reqfold.conformance.errors import AdapterCrashed, AdapterTimeout
from reqfold.reference.json_values import JsonObject

INTERNAL_ERROR = -32603
"""The code the stdio shell answers an unexpected exception with."""


class DirectConnection:
    """The in-process reference behind the `Connection` interface."""

    def __init__(self) -> None:
        from reqfold.reference.shells import adapter

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


class InProcessHarness:
    """The reference's harness adapter on a private event loop thread."""

    def __init__(self, *, timeout: float = 10.0, loop_class: Any = None) -> None:
        from reqfold.reference.shells import adapter, harness_adapter

        self.timeout = timeout
        self._rpc_error = adapter.RpcError
        self._notes: queue.Queue[JsonObject] = queue.Queue()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="reqfold-inprocess-harness", daemon=True
        )
        self._thread.start()
        options: dict[str, Any] = {}
        if loop_class is not None:
            options["loop_class"] = loop_class
        try:
            self._server = self._call_soon(
                lambda: harness_adapter.HarnessServer(self._notify, **options)
            )
        except BaseException:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(self.timeout)
            raise
        self._closed = False

    def _notify(self, method: str, params: JsonObject) -> None:
        self._notes.put({"jsonrpc": "2.0", "method": method, "params": params})

    def _call_soon(self, build: Any) -> Any:
        async def make() -> Any:
            return build()

        return asyncio.run_coroutine_threadsafe(make(), self._loop).result(self.timeout)

    def initialize(self) -> JsonObject:
        """Initialize the in-process reference."""
        response = self.request("initialize", {"protocolVersion": PROTOCOL_VERSION})
        result: JsonObject = response["result"]
        return result

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Answer one request as the stdio adapter would."""
        if self._closed:
            raise AdapterCrashed("the in-process harness was closed")
        future = asyncio.run_coroutine_threadsafe(
            self._server.handle(method, params), self._loop
        )
        try:
            return {"result": future.result(self.timeout)}
        except TimeoutError:
            future.cancel()
            raise AdapterTimeout(
                f"no answer to {method} within {self.timeout:g}s"
            ) from None
        except self._rpc_error as error:
            body: JsonObject = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            return {"error": body}
        except Exception as error:  # as the stdio shell answers a bug
            return {
                "error": {
                    "code": INTERNAL_ERROR,
                    "message": f"{type(error).__name__}: {error}",
                }
            }

    def receive_notification(self, timeout: float | None = None) -> JsonObject:
        """The next notification, in order."""
        wait = self.timeout if timeout is None else timeout
        try:
            return self._notes.get(timeout=wait)
        except queue.Empty:
            raise AdapterTimeout(f"no notification within {wait:g}s") from None

    async def _shutdown(self) -> None:
        """Close the server, then end whatever it left running, generators too."""
        try:
            await self._server.close()
        finally:
            current = asyncio.current_task()
            left = [task for task in asyncio.all_tasks() if task is not current]
            for task in left:
                task.cancel()
            await asyncio.gather(*left, return_exceptions=True)
            await self._loop.shutdown_asyncgens()

    def drain_notifications(self) -> list[JsonObject]:
        """The notifications that already arrived, without waiting for more."""
        drained: list[JsonObject] = []
        while True:
            try:
                drained.append(self._notes.get_nowait())
            except queue.Empty:
                return drained

    @property
    def stderr_tail(self) -> str:
        """Nothing: the in-process reference writes no stderr of its own."""
        return ""

    def kill(self) -> None:
        """In process there is nothing to kill: close, with the same timeout."""
        self.close()

    def close(self) -> None:
        """Dispose of every instance, stop the loop, join its thread."""
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop).result(
                self.timeout
            )
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(self.timeout)
        if not self._thread.is_alive():
            self._loop.close()
