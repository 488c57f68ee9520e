"""Fixtures for the reference loop's tests: the real fake provider, in process.

`harness` builds loops wired to one `fakes.FakeProvider` through its httpx
transport, sharing one deterministic clock (so events of every session in
a test are ordered by time). When the test ends it checks, over every
session the test ran:

- the reconstruction theorem: every request the fake captured equals, byte
  for byte, the body the log alone rebuilds for its step (a step aborted
  after its header event may or may not have reached the fake: it takes a
  capture only when the capture is its rebuild, as CHECK-1 says);
- the cache consequence: in an append-only stretch of one instance, each
  request hits the fake's cache for at least the previous request's prompt
  (rounded down to the cache block), unless the log records a header change
  or a surface replace in between.

A test that deliberately breaks the contract opts out with
``harness.check_theorem = False`` / ``harness.check_cache = False``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import pytest

from reqfold.fakes import FakeProvider, FakeTransport
from reqfold.reference.json_values import canonical_json
from reqfold.reference.loop import AgentLoop, ChatCompletionsClient, counter_clock
from reqfold.reference.reconstruct import compare_with_captures, rebuild_requests
from reqfold.reference.revisions import Revision
from reqfold.reference.session_log import SessionLog

T = TypeVar("T")

BASE_URL = "http://fake.test"
MODEL = "deepseek-chat"


class Harness:
    """Builds loops over the fake provider and checks every scenario at the end."""

    def __init__(self, fake: FakeProvider) -> None:
        self.fake = fake
        self.clock = counter_clock()
        self.clients: list[ChatCompletionsClient] = []
        self.loops: list[AgentLoop] = []
        self.check_theorem = True
        self.check_cache = True

    def client(self, **options: Any) -> ChatCompletionsClient:
        """A provider client on the fake's in-process transport."""
        options.setdefault("transport", FakeTransport(self.fake))
        client = ChatCompletionsClient(base_url=BASE_URL, **options)
        self.clients.append(client)
        return client

    def loop(
        self, *, client: ChatCompletionsClient | None = None, **options: Any
    ) -> AgentLoop:
        """A loop instance (new session unless `session=` is given)."""
        options.setdefault("model", MODEL)
        options.setdefault("clock", self.clock)
        loop = AgentLoop(provider=client or self.client(), **options)
        self.loops.append(loop)
        return loop

    def run(self, scenario: Awaitable[T]) -> T:
        """Run a scenario coroutine to completion, closing clients afterwards."""

        async def main() -> T:
            try:
                return await scenario
            finally:
                for client in self.clients:
                    await client.aclose()

        return asyncio.run(main())

    # ------------------------------------------------------------ checks

    def sessions(self) -> list[SessionLog]:
        """Each distinct session the test's loops ran over, in creation order."""
        seen: list[SessionLog] = []
        for loop in self.loops:
            if all(loop.session is not s for s in seen):
                seen.append(loop.session)
        # A session reloaded from a file continues an earlier one: keep the longest.
        return [
            s
            for s in seen
            if not any(
                o is not s and len(o) > len(s) and o.events[: len(s)] == s.events
                for o in seen
            )
        ]

    def verify(self) -> None:
        """The reconstruction theorem and the cache consequence, for every session."""
        if self.check_theorem:
            self.verify_theorem()
        if self.check_cache:
            for session in self.sessions():
                check_cache_consequence(session, self.fake.profile.block_size)

    def verify_theorem(self) -> None:
        """Every capture is byte-equal to the rebuild of one step, in order (CHECK-1).

        A step the log shows was sent (a response, a provider error) takes the
        next capture, which must equal its rebuild. A step that logged its
        header but got no response (aborted in flight) may or may not have
        reached the fake: it takes the next capture only when that capture
        is its rebuild. Every capture must be accounted for.
        """
        captures = self.fake.requests
        steps: list[tuple[int, SessionLog, Any]] = []
        for session in self.sessions():
            steps.extend(
                (session[rebuilt.boundary]["time"], session, rebuilt)
                for rebuilt in rebuild_requests(session.events, session.revision)
                if rebuilt.evidence != "none"
            )
        steps.sort(key=lambda item: item[0])
        matched: list[tuple[SessionLog, Any]] = []
        for _, session, rebuilt in steps:
            captured = captures[len(matched)] if len(matched) < len(captures) else None
            equal = captured is not None and captured.raw_body == canonical_json(
                rebuilt.body(stream=captured.json.get("stream", False))
            ).encode("utf-8")
            if rebuilt.sent:
                assert captured is not None, (
                    f"turn {rebuilt.turn} step {rebuilt.step} was sent; the fake"
                    f" captured only {len(captures)} request(s)"
                )
                assert equal, (
                    f"capture {captured.index} is not byte-equal to the rebuild of"
                    f" turn {rebuilt.turn} step {rebuilt.step}"
                )
            elif not equal:
                continue
            matched.append((session, captured))
        assert len(matched) == len(captures), (
            f"the logs account for {len(matched)} request(s); the fake captured"
            f" {len(captures)}"
        )
        for session in self.sessions():
            bodies = [c.json for s, c in matched if s is session]
            assert compare_with_captures(session.events, bodies, session.revision) == []


def check_cache_consequence(session: SessionLog, block: int) -> None:
    """Assert the cache consequence from the usage the log recorded (CACHE-1)."""
    events = session.events
    previous_prompt: int | None = None
    explained = False
    for event in events:
        kind = event["type"]
        if kind == "request/header":
            reason = event["data"]["reason"]
            if reason in ("initial", "resume"):
                previous_prompt = None
            explained = True
        elif kind == "request/header-delta" or event.get("surfaceOp") not in (
            None,
            "append",
        ):
            explained = True
        elif kind == "assistant/message" and "usage" in event["data"]:
            usage = event["data"]["usage"]
            cached = usage.get("cacheReadTokens", 0)
            prompt = usage["inputTokens"] + cached
            if previous_prompt is not None and not explained:
                floor = (previous_prompt // block) * block
                assert cached >= floor, (
                    f"seq {event['seq']}: cached {cached} tokens, expected at least"
                    f" {floor} (previous prompt {previous_prompt})"
                )
            previous_prompt = prompt
            explained = False


@pytest.fixture
def fake() -> FakeProvider:
    """A DeepSeek-dialect fake provider."""
    return FakeProvider("deepseek")


@pytest.fixture
def harness(fake: FakeProvider) -> Iterator[Harness]:
    """Loops over the fake; the theorem and cache consequence checked at the end."""
    h = Harness(fake)
    yield h
    h.verify()


@pytest.fixture
def revision() -> Revision:
    """The revision a test runs in (parametrize to change it)."""
    return Revision.SESSION_PREFIX
