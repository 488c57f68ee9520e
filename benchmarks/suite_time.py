"""The project's own test suite: its wall time, its CPU time, and where the CPU goes.

Usage::

    python benchmarks/suite_time.py [--top 15] [--target 90] [-- PYTEST_ARGS...]

Runs the README's test command (``python -m pytest``, which spreads the
tests over two workers per core) once, with this file loaded as a pytest
plugin that counts each test's CPU time (``getrusage``: its own process,
and the child processes it waited for). In the same run, and first, it
times the fixed cost every pytest process pays before a test runs (start
up and collect every test, ``--collect-only -n 0``): the baseline.

It prints:

- the wall time and the CPU time of the whole run (every process it
  waited for: the controller, the workers, their children);
- the floor of the wall time on this machine's cores (CPU time / cores: no
  test order can do better) against the target (``--target``, 90 s for
  the whole suite on two idle cores: issue 31; 30 s for ``-m "not
  slow"``), and how much CPU the target leaves;
- the CPU outside the tests (start-up, collection, the controller) against
  the baseline times the number of processes that paid it;
- the CPU of the tests by kind (Hypothesis ``@given`` tests; other tests in
  the test processes; the child processes tests started), and the
  ``--top`` test files and tests by CPU.

Exit status: 0 if the run's wall time is within the target, 1 if not, 2 if
a test failed or pytest did not run (the times then say nothing).
Arguments after ``--`` go to both pytest runs (``-- -m "not slow"``,
``-- -n 2``, ``-- tests/fakes``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PLUGIN = Path(__file__).stem
RECORDS = "REQFOLD_SUITE_TIME_DIR"
"""Where each test process writes its records; the plugin is inert without it."""


# ---------------------------------------------------------------- the plugin


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _record_file() -> Any:
    folder = os.environ[RECORDS]
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return open(Path(folder) / f"{worker}.jsonl", "a", encoding="utf-8")


_out: Any = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: object) -> Iterator[None]:
    """Counts one test's CPU: setup, call and teardown, and its children."""
    global _out
    if RECORDS not in os.environ:
        yield
        return
    own, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    yield
    if _out is None:
        _out = _record_file()
    record = {
        "id": item.nodeid,
        "self": _cpu(resource.RUSAGE_SELF) - own,
        "children": _cpu(resource.RUSAGE_CHILDREN) - children,
        "given": bool(getattr(getattr(item, "obj", None), "is_hypothesis_test", False)),
    }
    _out.write(json.dumps(record) + "\n")
    _out.flush()


# ---------------------------------------------------------------- the runner


def _run(argv: list[str], env: dict[str, str]) -> tuple[int, float, float, str]:
    """Exit status, wall seconds, CPU seconds (the process and every process
    it waited for) and the last line of standard output of one command."""
    before = _cpu(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - started
    lines = done.stdout.strip().splitlines() or done.stderr.strip().splitlines()
    return (
        done.returncode,
        wall,
        _cpu(resource.RUSAGE_CHILDREN) - before,
        (lines[-1] if lines else ""),
    )


def _records(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each test process's records, by process (``main`` or an xdist worker)."""
    return {
        path.stem: [json.loads(line) for line in path.read_text("utf-8").splitlines()]
        for path in sorted(folder.glob("*.jsonl"))
    }


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Arguments after -- go to pytest.",
    )
    parser.add_argument("--top", type=int, default=15, help="files and tests listed")
    parser.add_argument(
        "--target", type=float, default=90.0, help="the wall-time target (s)"
    )
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, theirs = parser.parse_args(argv[:cut]), argv[cut + 1 :]
    if args.top < 0 or args.target <= 0:
        parser.error("--top must be >= 0 and --target > 0")
    cores = _cores()
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", PLUGIN]
    with tempfile.TemporaryDirectory(prefix="suite-time-") as folder:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(Path(__file__).parent), *filter(None, [env.get("PYTHONPATH")])]
        )
        status, collect_wall, collect_cpu, said = _run(
            [*pytest, "--collect-only", *theirs, "-n", "0"],
            env,  # one process
        )
        if status not in (0, 1):  # 1: syrupy's "snapshots unused" after collecting
            print(f"pytest --collect-only exited {status}: {said}", file=sys.stderr)
            return 2
        env[RECORDS] = folder
        status, wall, cpu, summary = _run([*pytest, *theirs], env)
        by_process = _records(Path(folder))
    records = [record for found in by_process.values() for record in found]
    if status != 0 or not records:
        print(f"pytest exited {status}: {summary}", file=sys.stderr)
        return 2
    in_tests = sum(r["self"] + r["children"] for r in records)
    outside = cpu - in_tests
    floor = cpu / cores
    print(f"pytest: {summary}")
    print(f"wall {wall:.1f} s; CPU {cpu:.1f} s on {cores} cores")
    print(
        f"floor of the wall time (CPU / cores): {floor:.1f} s; target {args.target:g}"
        f" s leaves {args.target * cores:.0f} s of CPU, {args.target * cores / cpu:.0%}"
        " of this run's"
    )
    print(
        f"baseline, one process starting and collecting alone: {collect_cpu:.1f} s CPU,"
        f" {collect_wall:.1f} s wall"
    )
    print(
        f"CPU outside the tests (start-up, collection, controller): {outside:.1f} s;"
        f" the baseline times {len(by_process)} test processes:"
        f" {collect_cpu * len(by_process):.1f} s"
    )
    kinds = collections.Counter[str]()
    for r in records:
        kind = "@given tests" if r["given"] else "other tests"
        kinds[f"{kind}, in the test process"] += r["self"]
        kinds["child processes the tests started"] += r["children"]
    print(f"CPU in the tests: {in_tests:.1f} s, {len(records)} tests")
    for kind, seconds in kinds.most_common():
        print(f"  {seconds:7.1f} s  {seconds / cpu:4.0%}  {kind}")
    files = collections.Counter[str]()
    for r in records:
        files[r["id"].split("::")[0]] += r["self"] + r["children"]
    print(f"top {args.top} files by CPU:")
    for name, seconds in files.most_common(args.top):
        print(f"  {seconds:7.1f} s  {seconds / cpu:4.0%}  {name}")
    print(f"top {args.top} tests by CPU:")
    ranked = sorted(records, key=lambda r: -(r["self"] + r["children"]))
    for r in ranked[: args.top]:
        seconds = r["self"] + r["children"]
        print(f"  {seconds:7.1f} s  {seconds / cpu:4.0%}  {r['id']}")
    return 0 if wall <= args.target else 1


if __name__ == "__main__":
    raise SystemExit(main())
