"""The fake provider a probe serves on 127.0.0.1, with requests in flight counted.

One `FakeProvider` per probe, so its cache holds this probe's session
alone: the API-key isolation of the cache is turned off and each harness
process gets its own key, which attributes captures to processes while a
resumed process can still hit what the first one cached (CACHE-3). An
ASGI wrapper counts provider requests from arrival until their response
is fully sent, and notifies the probe's condition on each change: "no
request in flight" is part of the condition a turn is waited on. Where
the fake can refuse models it does not serve, the probe's fake serves any.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from reqfold.fakes import CapturedRequest, FakeProvider, Profile, key_digest
from reqfold.fakes.app import create_app
from reqfold.fakes.server import running_server

CONTROL = "/_fake"


class ProbeFake:
    """The probe's fake provider (use `serve` as a context manager)."""

    def __init__(self, dialect: str, changed: threading.Condition) -> None:
        overrides: dict[str, Any] = {"isolate_api_keys": False}
        if "models" in {field.name for field in dataclasses.fields(Profile)}:
            # Any model the harness names is served: the probe checks the
            # harness's requests, not its choice of model.
            overrides["models"] = ("*",)
        self.provider = FakeProvider(dialect, **overrides)
        self.changed = changed
        self.in_flight = 0
        self.started = 0
        self.url = ""

    def _tracked(self, app: Any) -> Any:
        async def tracked(scope: Any, receive: Any, send: Any) -> None:
            counted = scope["type"] == "http" and not scope["path"].startswith(CONTROL)
            if counted:
                with self.changed:
                    self.in_flight += 1
                    self.started += 1
                    self.changed.notify_all()
            try:
                await app(scope, receive, send)
            finally:
                if counted:
                    with self.changed:
                        self.in_flight -= 1
                        self.changed.notify_all()

        return tracked

    @contextmanager
    def serve(self) -> Iterator[str]:
        """Serve from a background thread; yields the base URL."""
        with ExitStack() as stack:
            app = self._tracked(create_app(self.provider))
            self.url = stack.enter_context(running_server(app=app))
            yield self.url

    @staticmethod
    def new_key() -> tuple[str, str]:
        """A fresh API key and the digest captures record for it."""
        key = "reqfold-probe-" + secrets.token_hex(16)
        return key, key_digest(key)

    def next_index(self) -> int:
        """The index the fake will give its next provider request."""
        requests = self.provider.requests
        return requests[-1].index + 1 if requests else 0

    def captures(self, digests: set[str]) -> list[CapturedRequest]:
        """Requests sent with one of these keys, in arrival order."""
        return [r for r in self.provider.requests if r.key in digests]
