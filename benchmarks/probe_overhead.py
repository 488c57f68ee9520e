"""Benchmark: what ``reqfold probe`` adds to a harness turn (issue 31).

The harness is the reference chat (``python -m reqfold.reference.chat``, a
real child process on 127.0.0.1 HTTP). Each session is played twice:

- **alone**: ``reqfold fake serve`` as a child process, the chat started
  against it, and each line written once the chat printed its prompt
  (``> ``), as a person would; the session is timed from starting the
  chat to its exit after end of input;
- **under the probe**: ``reqfold probe --cmd ...`` with the same turns,
  timed as a whole command (start, every turn, the judgement, the report),
  once pacing by the log (the default) and once by the prompt
  (``--ready "> "``).

Each is played with ``--few`` and ``--many`` turns (default 2 and 32).
Printed: the medians of ``--repeat`` runs of each; the slope between the
two (time per turn) and the rest (time paid once); and, more robust on a
loaded machine, the median gap between consecutive turns as the chat's
log stamps them (``turn/start`` times, its wall clock), and what the probe
adds to it: its gap less the harness's alone, the overhead per turn.
Wall clock: what a user waits for; the load average is printed with it
(on a shared machine read the numbers with it).

Run: python benchmarks/probe_overhead.py [--repeat 3] [--few 2] [--many 32]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHAT = [sys.executable, "-P", "-m", "reqfold.reference.chat"]
REQFOLD = [sys.executable, "-P", "-m", "reqfold.conformance.cli"]
PROMPT = b"> "


def turns(count: int) -> list[str]:
    """`count` short user turns."""
    return [f"question {index}: what is a session log?" for index in range(count)]


def read_until_prompt(stream: object) -> None:
    """Read the chat's stdout up to its next prompt (or its end)."""
    seen = b""
    while not seen.endswith(PROMPT):
        byte = stream.read(1)  # type: ignore[attr-defined]
        if not byte:
            raise SystemExit("the chat ended before its prompt")
        seen = seen[-1:] + byte


def turn_intervals(log: Path) -> list[float]:
    """Milliseconds between consecutive ``turn/start`` events of a chat log
    (the chat stamps events with the wall clock): a turn and its pacing."""
    starts = []
    with log.open("rb") as lines:
        for line in lines:
            event = json.loads(line)
            if event.get("type") == "turn/start":
                starts.append(float(event["time"]))
    return [after - before for before, after in itertools.pairwise(starts)]


def only_log(folder: str) -> Path:
    """The one log the chat wrote into `folder`."""
    logs = list(Path(folder).glob("*.jsonl"))
    if len(logs) != 1:
        raise SystemExit(f"the chat wrote {len(logs)} logs, not one")
    return logs[0]


def alone(count: int) -> tuple[float, list[float]]:
    """Seconds of one chat session of `count` turns against the fake alone,
    and the intervals between its turns (ms)."""
    with tempfile.TemporaryDirectory() as folder:
        fake = subprocess.Popen(
            [*REQFOLD, "fake", "serve"], stdout=subprocess.PIPE, text=True
        )
        try:
            assert fake.stdout is not None
            url = fake.stdout.readline().strip()
            environment = {
                **os.environ,
                "OPENAI_BASE_URL": url,
                "OPENAI_API_KEY": "bench",
            }
            started = time.perf_counter()
            chat = subprocess.Popen(
                [*CHAT, "--log-dir", folder],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=environment,
            )
            assert chat.stdin is not None
            assert chat.stdout is not None
            read_until_prompt(chat.stdout)
            for line in turns(count):
                chat.stdin.write(line.encode() + b"\n")
                chat.stdin.flush()
                read_until_prompt(chat.stdout)
            chat.stdin.close()
            chat.stdout.read()
            if chat.wait(timeout=60) != 0:
                raise SystemExit(f"the chat exited {chat.returncode}")
            spent = time.perf_counter() - started
            intervals = turn_intervals(only_log(folder))
        finally:
            fake.send_signal(signal.SIGINT)
            fake.wait(timeout=60)
    return spent, intervals


def probed(count: int, ready: bool) -> tuple[float, list[float]]:
    """Seconds of ``reqfold probe`` over a chat session of `count` turns, and
    the intervals between its turns (ms)."""
    with tempfile.TemporaryDirectory() as folder, tempfile.TemporaryDirectory() as logs:
        turns_file = Path(folder) / "turns.txt"
        turns_file.write_text("\n".join(turns(count)) + "\n", encoding="utf-8")
        command = " ".join([*CHAT, "--log-dir", logs])
        argv = [
            *REQFOLD,
            "probe",
            "--cmd",
            command,
            "--base-url-env",
            "OPENAI_BASE_URL",
            "--api-key-env",
            "OPENAI_API_KEY",
            "--turns",
            str(turns_file),
            "--log-dir",
            logs,
        ]
        if ready:
            argv += ["--ready", PROMPT.decode()]
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        spent = time.perf_counter() - started
        intervals = turn_intervals(only_log(logs)) if done.returncode == 0 else []
    if done.returncode != 0:
        tail = "\n".join(done.stdout.splitlines()[-5:])
        raise SystemExit(f"reqfold probe exited {done.returncode}:\n{tail}")
    if f"{count} of {count} turn(s) fed, {count} handled" not in done.stdout:
        raise SystemExit(f"the probe did not handle {count} turns:\n{done.stdout}")
    return spent, intervals


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--few", type=int, default=2)
    parser.add_argument("--many", type=int, default=32)
    args = parser.parse_args()
    if not 1 <= args.few < args.many or args.repeat < 1:
        parser.error("need 1 <= --few < --many and --repeat >= 1")
    ways = {
        "alone": lambda count: alone(count),
        "probe (log pacing)": lambda count: probed(count, ready=False),
        "probe (--ready)": lambda count: probed(count, ready=True),
    }
    times: dict[str, dict[int, float]] = {}
    gaps: dict[str, list[float]] = {}
    for way, play in ways.items():
        times[way], gaps[way] = {}, []
        for count in (args.few, args.many):
            runs = [play(count) for _ in range(args.repeat)]
            times[way][count] = statistics.median(seconds for seconds, _ in runs)
            for _, intervals in runs:
                gaps[way] += intervals
    one, five, _ = os.getloadavg()
    print(
        f"probe overhead: reference chat, {args.few} and {args.many} turns,"
        f" medians of {args.repeat} runs; load {one:.1f}/{five:.1f} on"
        f" {os.cpu_count()} cores"
    )
    print(
        f"{'':<19} {f'{args.few} turns s':>10} {f'{args.many} turns s':>11}"
        f" {'slope ms':>9} {'once s':>7} {'gap ms':>7} {'p90':>5} {'mean':>6}"
        f" {'adds ms':>8} {'mean':>6}"
    )
    base = statistics.median(gaps["alone"])
    base_mean = statistics.fmean(gaps["alone"])
    for way, by_count in times.items():
        slope = (by_count[args.many] - by_count[args.few]) / (args.many - args.few)
        once = by_count[args.few] - slope * args.few
        ordered = sorted(gaps[way])
        gap, mean = statistics.median(ordered), statistics.fmean(ordered)
        p90 = ordered[int(0.9 * (len(ordered) - 1))]
        added = "" if way == "alone" else f"{gap - base:>8.1f} {mean - base_mean:>6.1f}"
        print(
            f"{way:<19} {by_count[args.few]:>10.2f} {by_count[args.many]:>11.2f}"
            f" {slope * 1000:>9.1f} {once:>7.2f} {gap:>7.1f} {p90:>5.0f}"
            f" {mean:>6.1f} {added}"
        )
    print(
        "gap: the time between two turn/start events of the chat's log (its"
        " wall-clock stamps, ms), over every run: median, 90th percentile,"
        " mean; adds: the probe's gap less the harness's alone (median, mean),"
        " the time the probe adds to a turn; slope: the time per turn from"
        " whole-command times (noisier)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
