"""Large requests: bounded memory, other clients served meanwhile, bounded logs."""

from __future__ import annotations

import base64
import json
import random
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server
from reqfold.fakes.tokenizer import SegmentEncoder

pytestmark = pytest.mark.slow

MODEL = "deepseek-chat"


def body_of(text: str) -> bytes:
    message = {"role": "user", "content": text}
    return json.dumps({"model": MODEL, "messages": [message]}).encode()


class HeldEncoder(SegmentEncoder):
    """Holds the tokenizing of any segment longer than `threshold` characters
    until `release` is set, and says when it has started holding."""

    def __init__(self, threshold: int) -> None:
        super().__init__()
        self.threshold = threshold
        self.holding = threading.Event()
        self.release = threading.Event()

    def encode(self, text: str) -> tuple[bytes, bytes]:
        if len(text) > self.threshold:
            self.holding.set()
            assert self.release.wait(30), "the test never released the encoder"
        return super().encode(text)


@pytest.fixture
def held() -> Iterator[tuple[FakeProvider, HeldEncoder, str]]:
    provider = FakeProvider("deepseek")
    encoder = HeldEncoder(threshold=100_000)
    provider.encoder = encoder
    with running_server(provider) as url:
        try:
            yield provider, encoder, url
        finally:
            encoder.release.set()


def test_other_clients_are_answered_while_a_large_request_is_being_tokenized(held):
    provider, encoder, url = held
    outcome: list[httpx.Response] = []

    def send_large() -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            outcome.append(
                client.post("/chat/completions", content=body_of("word " * 50_000))
            )

    large = threading.Thread(target=send_large)
    large.start()
    try:
        assert encoder.holding.wait(10)
        # The large request sits in the middle of its work; a small one from
        # another client must still get its answer (before, it waited for the
        # large one, here forever: the timeout turns that into a failure).
        with httpx.Client(base_url=url, timeout=5) as client:
            small = client.post("/chat/completions", content=body_of("hi"))
            stats = client.get("/_fake/stats")
        assert small.status_code == 200
        assert stats.json()["answered"] == 1
    finally:
        encoder.release.set()
        large.join(30)
    assert [response.status_code for response in outcome] == [200]
    assert [record.index for record in provider.requests] == [0, 1]


def _peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM in /proc status")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
def test_a_large_request_costs_a_small_multiple_of_its_body_in_memory():
    child = subprocess.Popen(
        [sys.executable, "-m", "reqfold.conformance.cli", "fake", "serve"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        rng = random.Random(10)
        words = ["cache", "prefix", "token", "the", "of", "request", "a", "to"]
        text = " ".join(rng.choice(words) for _ in range(1_400_000))
        raw = body_of(text)
        with httpx.Client(base_url=url, timeout=120) as client:
            assert client.post("/chat/completions", content=body_of("hi")).is_success
            before = _peak_rss_bytes(child.pid)
            assert client.post("/chat/completions", content=raw).is_success
            after = _peak_rss_bytes(child.pid)
    finally:
        child.terminate()
        child.communicate(timeout=20)
    # Measured: about 7.5x the body (the raw bytes, the parsed body, the
    # rendered segment and the packed tokens); it was 36x.
    assert after - before < 12 * len(raw), (len(raw), after - before)


def _served(url: str, n: int, size: int) -> None:
    with httpx.Client(base_url=url) as client:
        for turn in range(n):
            response = client.post(
                "/chat/completions", content=body_of(f"{turn}" * size)
            )
            assert response.status_code == 200


def test_the_capture_log_is_bounded_by_bytes_and_stats_count_what_it_dropped():
    # Unrelated bodies of seeded random text: neither a delta against the
    # body before nor zlib keeps one in much less than 7.5 KB.
    rng = random.Random(5)
    bodies = [
        body_of(base64.b64encode(rng.randbytes(7_500)).decode()) for _ in range(4)
    ]
    provider = FakeProvider("deepseek", capture_max_bytes=18_000)
    with running_server(provider) as url, httpx.Client(base_url=url) as client:
        for body in bodies:
            assert client.post("/chat/completions", content=body).is_success
        stats = client.get("/_fake/stats").json()
        kept = client.get("/_fake/requests").json()["requests"]
        jsonl = client.get("/_fake/requests.jsonl").text
    assert [record["index"] for record in kept] == [2, 3]
    assert jsonl == provider.capture_jsonl()
    assert [json.loads(line)["index"] for line in jsonl.splitlines()] == [2, 3]
    assert [record.raw_body for record in provider.requests] == bodies[2:]
    assert stats["requests"] == 4
    stored = stats["capture"].pop("stored_bytes")
    assert 2 * 7_500 < stored <= 18_000
    size = len(bodies[0])
    assert stats["capture"] == {
        "requests": 2,
        "bytes": 2 * size,
        "max_requests": None,
        "max_bytes": 18_000,
        "dropped_requests": 2,
        "dropped_bytes": 2 * size,
    }


def test_the_newest_request_is_kept_even_when_its_body_alone_passes_the_bound():
    provider = FakeProvider("deepseek", capture_max_bytes=100)
    with running_server(provider) as url:
        _served(url, 2, 1_000)
    assert [record.index for record in provider.requests] == [1]
    assert provider.stats().capture.dropped_requests == 1


def test_the_ledger_forgets_the_oldest_prompts_past_its_bound_and_says_so():
    provider = FakeProvider("deepseek", ledger_max_bytes=25_000)
    with running_server(provider) as url:
        _served(url, 3, 10_000)
        with httpx.Client(base_url=url) as client:
            first = client.post("/chat/completions", content=body_of("0" * 10_000))
            stats = client.get("/_fake/stats").json()
    # Request 0 is forgotten: its twin (request 3) is no repeat of it, only
    # a request that diverges from the newest one remembered.
    assert first.status_code == 200
    assert stats["forgotten_prompts"] == 2
    diagnostic = provider.requests[-1].diagnostic
    assert (diagnostic["relation"], diagnostic["closest_request"]) == ("diverged", 2)


def test_tokenizing_window_by_window_gives_the_pieces_of_the_whole_text():
    from reqfold.fakes.tokenizer import _PIECE, _piece_windows, split_pieces

    rng = random.Random(3)
    alphabet = "ab cd\n\t  12345 中文 x_!é"
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 2000)))
        if rng.random() < 0.2:
            text = " " * rng.randint(0, 300) + text
        window = rng.randint(1, 40)
        pieces = [piece for chunk in _piece_windows(text, window) for piece in chunk]
        assert pieces == _PIECE.findall(text)
    assert split_pieces("a  long  text " * 10_000) == _PIECE.findall(
        "a  long  text " * 10_000
    )
