"""Fixtures for the fake provider's tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import httpx
import pytest

from reqfold.fakes import FakeProvider, FakeTransport

SSEParser = Callable[[str], list[tuple[str | None, str]]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def deepseek() -> FakeProvider:
    return FakeProvider("deepseek")


@pytest.fixture
def openai() -> FakeProvider:
    return FakeProvider("openai")


@pytest.fixture
def anthropic() -> FakeProvider:
    return FakeProvider("anthropic")


@pytest.fixture
def client(deepseek: FakeProvider) -> Iterator[httpx.Client]:
    with httpx.Client(
        transport=FakeTransport(deepseek),
        base_url="https://api.deepseek.com",
        headers={"authorization": "Bearer sk-test"},
    ) as session:
        yield session


def parse_sse(text: str) -> list[tuple[str | None, str]]:
    """(event name, data) per SSE event; comments and blank events skipped."""
    events: list[tuple[str | None, str]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        name: str | None = None
        data: list[str] = []
        for line in block.split("\n"):
            if line.startswith("event:"):
                name = line[len("event:") :].strip()
            elif line.startswith("data:"):
                data.append(line[len("data:") :].removeprefix(" "))
        if data:
            events.append((name, "\n".join(data)))
    return events


@pytest.fixture
def sse() -> SSEParser:
    return parse_sse


@pytest.fixture
def sse_json() -> Callable[[str], list[dict[str, object]]]:
    def payloads(text: str) -> list[dict[str, object]]:
        return [json.loads(data) for _, data in parse_sse(text) if data != "[DONE]"]

    return payloads
