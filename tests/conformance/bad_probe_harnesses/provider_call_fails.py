"""The reference chat, but its client calls a port where nothing listens:
every turn ends ``error`` in the log, nothing reaches the provider, and the
process exits 0 as ordinary chat harnesses do. ``reqfold probe`` must fail
CHECK-3: turns that ended without a request."""

from __future__ import annotations

import socket

from reqfold.reference.loop import ChatCompletionsClient
from reqfold.reference.shells.chat import Chat, main


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ProviderCallFails(Chat):
    def client(self, base_url: str, api_key: str) -> ChatCompletionsClient:
        return ChatCompletionsClient(
            base_url=f"http://127.0.0.1:{closed_port()}", api_key=api_key
        )


raise SystemExit(main(chat=ProviderCallFails))
