"""Transport-neutral HTTP values exchanged between the core and its shells.

The core (`FakeProvider.handle`) takes an `HttpRequest` and returns a
`ResponsePlan`: status, headers, the body as a sequence of chunks (one per
SSE frame for streams) and delivery instructions (wait for a delay or a
gate before the first byte; drop the connection after the chunks). The
ASGI app and the httpx transport only play plans back; they decide nothing.
`api_key_digest` names a request's API key without keeping it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from reqfold.fakes.gate import Gate

HARMLESS_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "anthropic-beta",
        "anthropic-dangerous-direct-browser-access",
        "anthropic-version",
        "cache-control",
        "connection",
        "content-encoding",
        "content-length",
        "content-type",
        "expect",
        "host",
        "http-referer",
        "openai-beta",
        "pragma",
        "referer",
        "request-id",
        "sec-fetch-mode",
        "te",
        "transfer-encoding",
        "user-agent",
        "x-client-request-id",
        "x-request-id",
        "x-title",
    }
)
"""Headers whose values are kept in a capture: how a request was framed and
who sent it, never who pays for it. Every other header is redacted."""

HARMLESS_HEADER_PREFIXES = ("x-stainless-",)
"""The OpenAI and Anthropic SDKs' telemetry headers (language, OS, retry
count): kept, unless the name looks like a credential."""

_CREDENTIAL_WORDS = re.compile(
    r"auth|key|token|secret|cookie|session|passw|signature|credential"
)

REDACTED = "<redacted>"


def header_is_harmless(name: str) -> bool:
    """Whether header `name`'s value may be written to a capture.

    An allow-list, not a deny-list: a credential header nobody thought of
    (`x-goog-api-key`, `helicone-auth`, `cookie`) is redacted by default.
    """
    lowered = name.lower()
    if _CREDENTIAL_WORDS.search(lowered):
        return False
    return lowered in HARMLESS_HEADERS or lowered.startswith(HARMLESS_HEADER_PREFIXES)


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpRequest:
    """One HTTP request as the core sees it (header names lowercase)."""

    method: str
    path: str
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    query: str = ""

    def header(self, name: str) -> str | None:
        """The first value of header `name` (case-insensitive), or `None`."""
        wanted = name.lower()
        for key, value in self.headers:
            if key.lower() == wanted:
                return value
        return None

    def redacted_headers(self) -> tuple[tuple[str, str], ...]:
        """Headers with every value not known to be harmless replaced by
        `<redacted>` (`header_is_harmless`)."""
        return tuple(
            (key, value if header_is_harmless(key) else REDACTED)
            for key, value in self.headers
        )


@dataclass(frozen=True, slots=True)
class LazyChunks:
    """Body pieces made one at a time as they are sent (`count` of them,
    from a fresh iterator of `make`): a long capture as JSONL is never
    whole in memory. The ASGI shell pulls each from a worker thread."""

    count: int
    make: Callable[[], Iterator[bytes]]

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[bytes]:
        return self.make()


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponsePlan:
    """What a shell must send back, and how.

    Attributes:
        status: HTTP status code.
        headers: response headers, in order.
        chunks: body pieces, sent in order (SSE: one frame each), or
            `LazyChunks` made as they are sent.
        streaming: whether the body is an event stream.
        delay: seconds to wait before the first byte.
        hold: a gate to await before the first byte.
        cut: drop the connection after `chunks` instead of ending cleanly.
    """

    status: int
    headers: tuple[tuple[str, str], ...]
    chunks: tuple[bytes, ...] | LazyChunks
    streaming: bool = False
    delay: float = 0.0
    hold: Gate | None = None
    cut: bool = False

    @property
    def body(self) -> bytes:
        """All chunks joined."""
        return b"".join(self.chunks)


JSON_HEADERS = (("content-type", "application/json"),)
SSE_HEADERS = (
    ("content-type", "text/event-stream; charset=utf-8"),
    ("cache-control", "no-cache"),
)


def json_headers(length: int, *extra: tuple[str, str]) -> tuple[tuple[str, str], ...]:
    """JSON content headers with a `content-length` of the full body."""
    return (*JSON_HEADERS, ("content-length", str(length)), *extra)


def api_key_digest(request: HttpRequest) -> str:
    """A digest of the request's API key (never the key itself)."""
    key = request.header("x-api-key") or request.header("api-key") or ""
    authorization = request.header("authorization")
    if authorization:
        scheme, _, token = authorization.partition(" ")
        key = token.strip() if scheme.lower() == "bearer" else authorization
    return key_digest(key)


def key_digest(key: str) -> str:
    """The digest the capture records for API key `key` (16 hex digits)."""
    return hashlib.blake2b(
        key.encode("utf-8", "surrogatepass"), digest_size=8
    ).hexdigest()
