"""Peak memory of ``reqfold check`` on one huge line (issue 10, item 12).

Usage::

    python benchmarks/check_big_line.py [--mb 200] [--dir DIR]

Writes valid one-turn logs, each with one line of about ``--mb``
megabytes: a plugin event whose data holds one long string (compact, and
with a space after a colon, which sends the line down the strict path), and
a ``turn/start`` whose data holds a list of small numbers (``0,0,0,...``,
half a million per megabyte). Each is checked by a fresh child process
(``python -m reqfold.conformance.cli check``, default and ``--thorough``), and the
child's peak resident memory is printed beside the line's size, with the
resident memory of a child that checks a small log for comparison.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

MB = 1 << 20
STORAGE = b'{"type":"session","version":0,"id":"big","createdAt":0}\n'
OPEN = b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n'
END = (
    b'{"type":"turn/end","seq":%d,"time":0,"data":{"turn":1,'
    b'"reason":{"kind":"completed"}}}\n'
)


def write_string_log(path: Path, size: int, *, spaced: bool = False) -> None:
    """A turn holding one plugin event whose data is one `size`-byte string
    (with a space after the envelope's ``"data":`` when `spaced`: not
    canonical, so the line takes the checker's strict path)."""
    with path.open("wb") as out:
        out.write(STORAGE + OPEN)
        colon = b": " if spaced else b":"
        out.write(b'{"type":"plugin/blob","seq":1,"time":0,"data"' + colon)
        out.write(b'{"text":"')
        chunk = b"a" * MB
        for _ in range(size // MB):
            out.write(chunk)
        out.write(b'"}}\n')
        out.write(END % 2)


def write_numbers_log(path: Path, size: int) -> None:
    """A turn whose ``turn/start`` data holds `size`/2 small numbers."""
    with path.open("wb") as out:
        out.write(STORAGE)
        out.write(b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1,"n":[')
        chunk = b"0," * (MB // 2)
        for _ in range(size // MB):
            out.write(chunk)
        out.write(b"0]}}\n")
        out.write(END % 1)


def peak_rss(*args: str) -> tuple[float, int]:
    """Peak RSS (MB) and exit status of a child running ``reqfold check``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    status = subprocess.run(
        [sys.executable, "-m", "reqfold.conformance.cli", "check", *args],
        stdout=subprocess.DEVNULL,
        check=False,
    ).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # RUSAGE_CHILDREN is the largest child so far: run the biggest last.
    return max(after, before) / 1024, status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the big line")
    parser.add_argument("--dir", default=None, help="where to write the logs")
    args = parser.parse_args()
    size = args.mb * MB
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        small = Path(folder) / "small.jsonl"
        small.write_bytes(STORAGE + OPEN + END % 1)
        strings, numbers = Path(folder) / "string.jsonl", Path(folder) / "numbers.jsonl"
        spaced = Path(folder) / "spaced.jsonl"
        write_string_log(strings, size)
        write_string_log(spaced, size, spaced=True)
        write_numbers_log(numbers, size)
        print(f"{'log':<28} {'line MB':>8} {'peak MB':>8} {'status':>6}")
        for name, path, options in [
            ("small log", small, []),
            ("string line", strings, []),
            ("string line --thorough", strings, ["--thorough"]),
            ("string line, not canonical", spaced, []),
            ("turn/start numbers", numbers, []),
            ("turn/start numbers --thorough", numbers, ["--thorough"]),
        ]:
            # a fresh interpreter per run: RUSAGE_CHILDREN keeps the maximum
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(path), *options],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.split()
            line = path.stat().st_size / MB if path is not small else 0.0
            print(f"{name:<28} {line:>8.1f} {float(out[0]):>8.1f} {out[1]:>6}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        peak, status = peak_rss(*sys.argv[2:])
        print(f"{peak:.1f} {status}")
        raise SystemExit(0)
    raise SystemExit(main())
