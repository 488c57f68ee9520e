"""Benchmark: a real-sized session against ``reqfold fake serve``, end to end.

Real harnesses open with 10k-40k-token prompts and 75-120 KB bodies from
their first request (issue 31). This starts ``reqfold fake serve
--capture-out`` as a child process on 127.0.0.1 (captures on, as a probe
or a user runs it), then plays one session of ``--requests`` requests
(default 100): the first body is about ``--kb`` KB (a system prompt and
30 tool schemas, then the user's message), and each next request repeats
the previous one, appends the fake's reply and a new user message (about
200 tokens more), as a harness does; with ``--compact-every N`` the history
is replaced by a summary every N requests, as harnesses compact, so a long
session (``--requests 3000 --compact-every 60``) keeps 100-160 KB bodies.
Each request is sent over HTTP by
one httpx client and timed by the wall clock from send to the last byte
of the answer (half the session streams, half does not).

Printed: the latency per request (median, 90th percentile and the
largest, and the first request's, which is cold), the body sizes, the
warm requests' cache hit ratio, the server's resident memory after it
started and its peak after the session (VmHWM of its own process) and
after the capture was read once over HTTP (``GET /_fake/requests.jsonl``), the
time from SIGINT to its exit (the capture is written then), the capture
file's size against the bodies' total, and what the capture kept in memory
(``GET /_fake/stats``: requests kept and dropped, the bytes it keeps for
their bodies). The load average is
printed: on a shared machine, read the latencies with it.

Run: python benchmarks/fake_session.py [--requests 100] [--kb 100] [--seed 7]
[--compact-every N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

MODEL = "deepseek-chat"
PROSE = (
    "the request header is folded from the log and every request rebuilds"
    " from its boundary so caches keep hitting while tools run and results"
    " stream back into the derived history one append at a time"
)
WORDS = PROSE.split(" ")


def text(rng: random.Random, words: int) -> str:
    """Seeded prose of `words` words."""
    return " ".join(rng.choice(WORDS) for _ in range(words))


def tool(rng: random.Random, index: int) -> dict[str, Any]:
    """A tool schema of about 2 KB, as real harnesses send them."""
    properties = {
        f"arg{field}": {"type": "string", "description": text(rng, 30)}
        for field in range(5)
    }
    return {
        "type": "function",
        "function": {
            "name": f"tool_{index}",
            "description": text(rng, 40),
            "parameters": {"type": "object", "properties": properties},
        },
    }


def opening(rng: random.Random, kilobytes: float) -> dict[str, Any]:
    """The first body: a system prompt and 30 tools, about `kilobytes` KB."""
    tools = [tool(rng, index) for index in range(30)]
    system = ""
    budget = int(kilobytes * 1024) - len(json.dumps(tools)) - 200
    while len(system) < budget:
        system += text(rng, 12) + "\n"
    return {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": text(rng, 40)},
        ],
        "tools": tools,
    }


def start_server(capture: Path) -> tuple[subprocess.Popen[str], str]:
    """``reqfold fake serve`` with captures on; its process and base URL."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-P",
            "-m",
            "reqfold.conformance.cli",
            "fake",
            "serve",
            "--capture-out",
            str(capture),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    url = child.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        child.kill()
        raise SystemExit(f"reqfold fake serve printed {url!r}, not its URL")
    return child, url


def memory_mb(pid: int, field: str) -> float:
    """A ``/proc/PID/status`` memory field (VmRSS, VmHWM) in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise SystemExit(f"no {field} for process {pid}")


def reply_text(response: httpx.Response, streamed: bool) -> str:
    """The assistant's text in a chat-completions answer, streamed or not."""
    if not streamed:
        return str(response.json()["choices"][0]["message"]["content"] or "")
    pieces = []
    for line in response.text.splitlines():
        if line.startswith("data: {"):
            delta = json.loads(line[6:])["choices"][0]["delta"]
            pieces.append(delta.get("content") or "")
    return "".join(pieces)


def play(
    url: str, requests: int, kilobytes: float, seed: int, compact_every: int = 0
) -> dict[str, Any]:
    """Send the session; the latencies, body sizes, cache hits and the
    capture's stats after it."""
    rng = random.Random(seed)
    body = opening(rng, kilobytes)
    latencies: list[float] = []
    sizes: list[int] = []
    hits: list[float] = []
    with httpx.Client(
        base_url=url, headers={"authorization": "Bearer bench"}, timeout=60
    ) as client:
        for index in range(requests):
            streamed = index % 2 == 1
            if compact_every and index % compact_every == compact_every - 1:
                summary = {"role": "user", "content": "summary: " + text(rng, 200)}
                body["messages"] = [body["messages"][0], summary]
            raw = json.dumps({**body, "stream": streamed}).encode()
            started = time.perf_counter()
            response = client.post(
                "/chat/completions",
                content=raw,
                headers={"content-type": "application/json"},
            )
            response.read()
            latencies.append(time.perf_counter() - started)
            if response.status_code != 200:
                raise SystemExit(f"request {index}: status {response.status_code}")
            sizes.append(len(raw))
            if not streamed and index:
                usage = response.json()["usage"]
                hits.append(
                    usage.get("prompt_cache_hit_tokens", 0) / usage["prompt_tokens"]
                )
            body["messages"] = [
                *body["messages"],
                {"role": "assistant", "content": reply_text(response, streamed)},
                {"role": "user", "content": text(rng, 150)},
            ]
        capture = client.get("/_fake/stats").json()["capture"]
    return {"latencies": latencies, "sizes": sizes, "hits": hits, "capture": capture}


def read_capture(url: str) -> tuple[int, float]:
    """``GET /_fake/requests.jsonl`` streamed: its lines and seconds."""
    started = time.perf_counter()
    lines = 0
    with httpx.stream("GET", url + "/_fake/requests.jsonl", timeout=600) as answer:
        for _ in answer.iter_lines():
            lines += 1
    return lines, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--kb", type=float, default=100, help="first body, KB")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--compact-every", type=int, default=0, help="summarize every N requests"
    )
    args = parser.parse_args()
    if args.requests < 2:
        parser.error("--requests must be at least 2")
    with tempfile.TemporaryDirectory() as folder:
        capture = Path(folder) / "capture.jsonl"
        child, url = start_server(capture)
        try:
            started_mb = memory_mb(child.pid, "VmRSS")
            played = play(url, args.requests, args.kb, args.seed, args.compact_every)
            peak_mb = memory_mb(child.pid, "VmHWM")
            read_lines, read_s = read_capture(url)
            read_peak_mb = memory_mb(child.pid, "VmHWM")
            stopping = time.perf_counter()
            child.send_signal(signal.SIGINT)
            status = child.wait(timeout=120)
            stop_s = time.perf_counter() - stopping
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        if status != 0:
            raise SystemExit(f"reqfold fake serve exited {status}")
        capture_mb = capture.stat().st_size / 2**20
        with capture.open("rb") as lines:
            captured = sum(1 for _ in lines)
    latencies = [seconds * 1000 for seconds in played["latencies"]]
    sizes = played["sizes"]
    warm = sorted(latencies[1:])
    one, five, _ = os.getloadavg()
    print(
        f"fake session benchmark: {args.requests} requests, seed {args.seed},"
        f" load {one:.1f}/{five:.1f} on {os.cpu_count()} cores"
    )
    print(
        f"  bodies: first {sizes[0] / 1024:.0f} KB, last {sizes[-1] / 1024:.0f} KB,"
        f" {sum(sizes) / 2**20:.1f} MB in all"
    )
    print(
        f"  latency ms: first (cold) {latencies[0]:.1f}; warm median"
        f" {statistics.median(warm):.1f}, p90 {warm[int(0.9 * (len(warm) - 1))]:.1f},"
        f" max {warm[-1]:.1f}"
    )
    print(
        f"  warm cache hit ratio (non-streamed): median"
        f" {statistics.median(played['hits']):.3f}"
    )
    print(
        f"  server memory MB: {started_mb:.1f} after start, peak {peak_mb:.1f}"
        f" after the session, {read_peak_mb:.1f} after GET /_fake/requests.jsonl"
        f" ({read_lines} lines in {read_s:.1f} s)"
    )
    print(
        f"  stop (SIGINT to exit, capture written): {stop_s * 1000:.0f} ms;"
        f" capture {captured} lines, {capture_mb:.1f} MB"
        f" ({capture_mb / (sum(sizes) / 2**20):.2f}x the bodies)"
    )
    kept = played["capture"]
    stored = kept.get("stored_bytes")
    print(
        f"  capture in memory: {kept['requests']} requests kept,"
        f" {kept['dropped_requests']} dropped;"
        + (f" {stored / 2**20:.1f} MB kept for" if stored is not None else " kept")
        + f" {kept['bytes'] / 2**20:.1f} MB of bodies"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
