"""Benchmark: the wall time of the default ``reqfold run``, part by part.

Times ``reqfold run`` (the README's main job: the reference's harness
adapter as a child process) as a whole and each part alone (``--only
vectors``, ``--only properties``, ``--only scenarios``), every one as a
real command, and, in the same run, the same parts against the reference
in process (``--impl reference``): the ratio between the two is what the
process boundary and the JSON-RPC framing cost. A ``python -c pass``
start-up is measured too, as the floor any command pays.

Printed: the median of ``--repeat`` runs per row, its ratio to the
in-process row, and whether the whole run meets the budget of
docs/harness-guide.md (under 60 s on two cores is required; 20 s is the
aim). Every run must exit 0; a run that does not stops the benchmark.

Run: python benchmarks/run_wall.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

REQUIRED_SECONDS = 60.0
AIM_SECONDS = 20.0
PARTS = ("vectors", "properties", "scenarios")


def timed(argv: list[str]) -> float:
    """Seconds one command took; it must exit 0."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        tail = "\n".join(done.stdout.splitlines()[-5:])
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{tail}")
    return seconds


def median_of(argv: list[str], repeat: int) -> float:
    return statistics.median(timed(argv) for _ in range(repeat))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    run = [sys.executable, "-m", "reqfold.conformance.cli", "run"]
    floor = median_of([sys.executable, "-c", "pass"], args.repeat)
    print(f"python start-up: {floor:.2f} s (median of {args.repeat})")
    print()
    print(f"{'part':<12} {'child process':>14} {'in process':>11} {'ratio':>6}")
    rows: list[tuple[str, list[str]]] = [(part, ["--only", part]) for part in PARTS]
    rows.append(("whole run", []))
    whole = 0.0
    for name, extra in rows:
        child = median_of([*run, *extra], args.repeat)
        direct = median_of([*run, "--impl", "reference", *extra], args.repeat)
        print(f"{name:<12} {child:>12.2f} s {direct:>9.2f} s {child / direct:>6.2f}")
        whole = child
    print()
    verdict = (
        "meets the aim"
        if whole <= AIM_SECONDS
        else "within the budget"
        if whole <= REQUIRED_SECONDS
        else "OVER THE BUDGET"
    )
    print(
        f"default 'reqfold run': {whole:.1f} s median; required under"
        f" {REQUIRED_SECONDS:.0f} s, aim {AIM_SECONDS:.0f} s: {verdict}"
    )
    return 0 if whole <= REQUIRED_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
