"""Throughput and memory of ``reqfold check`` against a parse-only orjson loop.

Usage::

    python benchmarks/check_throughput.py [--mb 64] [--repeats 5] [--seed 0]
        [--shape mixed|harness|undeclared|all] [--sizes 256,1024]
        [--clock wall|cpu]

Generates (seeded, see `check_log_generator`) valid session logs of
``mb/16``, ``mb/4`` and ``mb`` megabytes (the 1x, 4x, 16x scaling series),
or of the ``--sizes`` given, in each shape asked for (``mixed``: the event
mix of the research notes; ``harness``: the real harness's logs of issue 11,
chunk-heavy, 30 tools with nested schemas, a header delta every ~20 steps;
``undeclared``: the same with no revision on its storage line, as the
original harness's logs never declare one, so the check infers it, issue 31),
asserts each passes the checker with no finding, then times, in this same
process and interleaved, the simplest loop that only parses every line with
orjson (the baseline) and ``reqfold check`` less its printing
(`reqfold.conformance.check.cli.check_one`) over the same file, several times each,
each check between two baseline runs (so the baseline runs once more than
the check). It prints the medians of the times, the ratio (baseline time /
check time: above 1.0 the checker is faster than merely parsing; the median
of each check's ratio to the mean of the baseline runs just before and after
it, so a machine whose speed drifts between runs moves it less than a ratio
of medians), the check time per megabyte (flat when scaling is linear) and
the peak resident memory of a child process that checks the file (flat when
memory does not grow with the log). The machine's load average is printed
with each row: on a shared machine, read the ratios with it.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_log_generator import SHAPES

from reqfold.conformance.check.cli import add_arguments, check_one

MB = 1 << 20
READ_BUFFER = 1 << 20


def parse_only(path: str) -> int:
    """The baseline: parse every line with orjson and do nothing else."""
    count = 0
    with open(path, "rb", buffering=READ_BUFFER) as handle:
        for line in handle:
            orjson.loads(line)
            count += 1
    return count


def check(path: str) -> int:
    """``reqfold check PATH`` less its printing (revision inference included,
    where the storage line names none); returns the number of findings."""
    report = check_one(path, _ARGUMENTS.parse_args([path]))
    return sum(report.counts.values())


_ARGUMENTS = argparse.ArgumentParser()
add_arguments(_ARGUMENTS)


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
"""``--clock cpu`` times this process's CPU time only: on a shared machine
other processes' load moves it much less than the wall clock."""


def _timed(function: object, path: str, clock: str = "wall") -> float:
    now = CLOCKS[clock]
    start = now()
    function(path)  # type: ignore[operator]
    return now() - start


def child_peak_rss(path: str) -> float:
    """Peak RSS (MB) of a fresh process that checks `path`."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", path],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip())


def own_peak_mb() -> float:
    """This process's peak RSS (MB) since it started its program.

    Linux keeps ``ru_maxrss`` across exec, so a child forked from a large
    benchmark process would report the parent's size; VmHWM belongs to the
    address space the program runs in.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _at_least_one(text: str) -> int:
    """``--repeats``: a whole number of checks, one or more."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, not {text!r}")
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=64, help="largest log size (MB)")
    parser.add_argument(
        "--repeats", type=_at_least_one, default=5, help="checks per log (>= 1)"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", default=None, help="where to write the logs")
    parser.add_argument(
        "--shape", choices=[*SHAPES, "all"], default="all", help="log shape(s)"
    )
    parser.add_argument(
        "--sizes", default=None, help="log sizes in MB, comma-separated (no series)"
    )
    parser.add_argument(
        "--clock", choices=list(CLOCKS), default="wall", help="what to time"
    )
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        findings = check(args.child)
        print(f"{own_peak_mb():.1f}")
        return 0 if findings == 0 else 1
    sizes = (
        [float(size) for size in args.sizes.split(",")]
        if args.sizes
        else [args.mb / 16, args.mb / 4, args.mb]
    )
    shapes = list(SHAPES) if args.shape == "all" else [args.shape]
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        print(
            f"{'shape':>7} {'size':>9} {'lines':>10} {'orjson s':>9} {'check s':>9}"
            f" {'check MB/s':>10} {'s per GB':>9} {'ratio':>6} {'peak MB':>8}"
            f" {'load':>5}"
        )
        ratios = []
        for shape in shapes:
            for size in sizes:
                path = os.path.join(folder, f"log-{shape}-{size:g}.jsonl")
                with open(path, "w", encoding="utf-8") as out:
                    SHAPES[shape](out, int(size * MB), seed=args.seed)
                actual = os.path.getsize(path) / MB
                findings = check(path)
                if findings:
                    raise SystemExit(f"the generated log has {findings} findings")
                # each check runs between two baseline loops, and its ratio
                # is taken against their mean: a machine whose speed drifts
                # moves both sides of one ratio alike
                baseline = [_timed(parse_only, path, args.clock)]
                checked: list[float] = []
                for _ in range(args.repeats):
                    checked.append(_timed(check, path, args.clock))
                    baseline.append(_timed(parse_only, path, args.clock))
                lines = parse_only(path)
                base, ours = statistics.median(baseline), statistics.median(checked)
                ratio = statistics.median(
                    (baseline[at] + baseline[at + 1]) / 2 / spent
                    for at, spent in enumerate(checked)
                )
                ratios.append(f"{shape} {actual:.0f} MB {ratio:.2f}x")
                peak = child_peak_rss(path)
                print(
                    f"{shape:>7} {actual:>7.1f}MB {lines:>10} {base:>9.3f}"
                    f" {ours:>9.3f} {actual / ours:>10.1f}"
                    f" {ours / actual * 1024:>9.2f} {ratio:>5.2f}x {peak:>8.1f}"
                    f" {os.getloadavg()[0]:>5.1f}",
                    flush=True,
                )
                os.remove(path)
        print(
            f"ratio (orjson parse-only time / check time, each check against"
            f" the orjson loops just before and after it), median of"
            f" {args.repeats} ({args.clock} clock): {', '.join(ratios)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
