"""Time and memory of the cache judgement on a large capture.

Usage::

    python benchmarks/cache_judgement.py [--requests 500] [--kb 100]
        [--repeats 5] [--seed 0]

Writes (seeded) a capture in the fake's JSONL form of `--requests`
requests whose bodies average `--kb` kilobytes: a 60 % opening (tools and
a system prompt), a conversation that grows by one turn a request, a title
request every 50 (a side stream) and a resumed process every 100 with
the date moved in the system prompt (a break with a cause). Each line
holds the body twice (`body` and `raw_body`), as the fake's does. It then
times, interleaved in this process, a loop that only decodes every line
with the standard library's `json` (the baseline) and
`judge_cache(read_capture_lines(...))` over the same file, and prints the
medians, their ratio, and the peak resident memory of a child process
that judges the file, beside the capture's size and its largest line (the
memory should follow a few bodies, not the capture).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reqfold.conformance.cache import (
    ProcessStart,
    cache_status,
    judge_cache,
    read_capture_lines,
)

KB = 1024


def tools(rng: random.Random, size: int) -> list[object]:
    """Tool definitions of about `size` bytes in all."""
    out: list[object] = []
    words = ["read", "write", "file", "path", "the", "project", "line", "run"]
    while len(json.dumps(out)) < size:
        name = f"tool_{len(out)}"
        text = " ".join(rng.choice(words) for _ in range(200))
        out.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": text,
                    "parameters": {"type": "object", "properties": {}},
                },
            }
        )
    return out


def capture(path: Path, requests: int, kb: int, seed: int) -> list[ProcessStart]:
    """Write the capture; return its process starts."""
    rng = random.Random(seed)
    opening = int(kb * KB * 0.6)
    the_tools = tools(rng, opening // 2)
    system = "".join(
        f"Rule {n}: "
        + " ".join(rng.choice(["be", "careful", "always", "read"]) for _ in range(12))
        + "\n"
        for n in range(opening // 2 // 60)
    )
    growth = max(1, (kb * KB * 0.8) // requests)
    messages: list[object] = []
    starts = [ProcessStart(first_index=0, name="process 1", kind="first")]
    day = 6
    with path.open("w", encoding="utf-8") as out:
        for index in range(requests):
            if index and index % 100 == 0:
                day += 1
                starts.append(
                    ProcessStart(
                        first_index=index,
                        name=f"process {len(starts) + 1}",
                        kind="resume",
                    )
                )
            if index % 50 == 25:
                body = {
                    "model": "deepseek-chat",
                    "messages": [
                        {"role": "system", "content": "You write titles."},
                        {"role": "user", "content": f"title for request {index}"},
                    ],
                }
            else:
                text = " ".join(
                    rng.choice(["fix", "the", "bug", "in", "main"])
                    for _ in range(int(growth) // 8)
                )
                messages.append({"role": "user", "content": text})
                body = {
                    "model": "deepseek-chat",
                    "messages": [
                        {
                            "role": "system",
                            "content": system + f"Current date: 2026-12-{day:02d}\n",
                        },
                        *messages,
                    ],
                    "tools": the_tools,
                }
                messages.append({"role": "assistant", "content": "ok"})
            raw = json.dumps(body)
            line = {
                "index": index,
                "method": "POST",
                "path": "/chat/completions",
                "status": 200,
                "at": 0.0,
                "key": "",
                "headers": [],
                "body": body,
                "raw_body": raw,
                "raw_body_base64": None,
                "reply": {"role": "assistant", "content": "ok"},
                "usage": None,
                "diagnostic": None,
            }
            out.write(json.dumps(line) + "\n")
    return starts


def judge_file(path: Path, starts: list[ProcessStart]) -> int:
    with path.open("rb") as lines:
        judgement = judge_cache(read_capture_lines(lines), starts=starts)
    unexpected = [item for item in judgement.breaks if item.expected is None]
    assert len(unexpected) == len(starts) - 1, unexpected
    return cache_status(judgement)


def decode_only(path: Path) -> None:
    with path.open("rb") as lines:
        for line in lines:
            json.loads(line)


def child_peak(path: Path, starts: int, *, judge: bool = True) -> int:
    """Peak resident kilobytes of a child that judges the file (or only
    imports the judgement, with `judge` false)."""
    code = (
        "import sys, resource\n"
        "from reqfold.conformance.cache import ProcessStart, judge_cache,"
        " read_capture_lines\n"
        "starts = [ProcessStart(first_index=i * 100, name=str(i))"
        f" for i in range({starts})]\n"
        "with open(sys.argv[1], 'rb') as f:\n"
        f"    judge_cache(read_capture_lines(f), starts=starts) if {judge} else None\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "requests.jsonl"
        starts = capture(path, args.requests, args.kb, args.seed)
        size = path.stat().st_size
        with path.open("rb") as lines:
            largest = max(len(line) for line in lines)
        base, judged = [], []
        for _ in range(args.repeats):
            began = time.perf_counter()
            decode_only(path)
            base.append(time.perf_counter() - began)
            began = time.perf_counter()
            judge_file(path, starts)
            judged.append(time.perf_counter() - began)
        peak = child_peak(path, len(starts))
        idle = child_peak(path, len(starts), judge=False)
    print(
        f"capture: {args.requests} requests, {size / KB / KB:.1f} MiB"
        f" (bodies average {size / args.requests / 2 / KB:.0f} KiB, each twice),"
        f" largest line {largest / KB:.0f} KiB; load {os.getloadavg()[0]:.2f}"
    )
    print(
        f"json.loads of every line (baseline): median {statistics.median(base):.3f} s"
    )
    print(
        "judge_cache:                          median"
        f" {statistics.median(judged):.3f} s"
        f"  (ratio {statistics.median(judged) / statistics.median(base):.2f}x baseline)"
    )
    print(
        f"peak RSS of a child judging the file: {peak / KB:.0f} MiB"
        f" (a child that only imports the judgement: {idle / KB:.0f} MiB)"
    )


if __name__ == "__main__":
    main()
