"""What decoding runs of chunk lines in one call buys the checker's reader.

Usage::

    python benchmarks/chunk_runs.py [--mb 32] [--repeats 9] [--seed 0]

Issue 31's lever for the ``harness`` shape (docs/checker.md, "Speed and
memory"): the reader passes over ``assistant/chunk`` lines one by one,
paying Python's cost per line; a run of N complete lines is one JSON array
once its newlines are commas, which msgspec decodes into typed structs in
one call. This benchmark writes the seeded ``harness`` log and times, by
CPU, in one process, interleaved, readers that all yield the same lines
and pass over the same chunks (it asserts so before timing):

- ``today``: `reqfold.conformance.check.reader.LineReader` over the lines
  as ``reqfold check`` splits them (an `io.BufferedReader`), behind a
  driver that lets the chunks after every line be passed over;
- ``array``: blocks of the file; a run of lines beginning with a chunk's
  prefix is found by a compiled regex and decoded as one array of
  ``ChunkEnvelope`` (the type a literal, no optional member), then proven
  to hold what the per-line tests would accept: as many structs as lines
  (with no ``}``, ``,``, ``{`` between two values inside a line, a comma
  that was a newline is the only place one value can end and the next
  begin), seqs in order, every line ending ``}}``, ASCII, no long integer;
  anything else reads the run line by line, as ``today``;
- ``split``: the same blocks, the run split at its newlines in C and each
  line decoded by ``map`` (no proof of boundaries needed), the same tests
  over the list;
- ``hybrid``: blocks whose lines `io.BytesIO` splits in C (as
  `LineReader`'s are split), each line read as ``today`` does, but after
  the first chunk of a run is passed over, the rest of the run is found,
  decoded and proven as ``array`` does;
- ``hybrid split``: the same, the rest of a run read as ``split`` reads it;
- ``bound``: only the array decode of every run, found beforehand: no
  reader, no test, no line outside a run; the least any batch path pays
  for the chunks (not a reader: it proves nothing);
- ``run path``: only a run's own path in ``array`` (find its end, build,
  decode and prove the array) over every run, found beforehand;
- ``found``: the block reader with every run found and its lines counted,
  but nothing in it decoded or proven (not a reader either): with
  ``bound`` beside it, the least a batch reader of this design pays;
- ``no chunks``: ``today`` over the same log without its chunk lines
  (so ``today`` less this is what `LineReader` spends on the chunks).

It prints the median CPU time of each over the whole file, the chunks
passed over, and the machine's load.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from operator import attrgetter, methodcaller
from pathlib import Path
from typing import Annotated, Literal

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_log_generator import SHAPES

from reqfold.conformance.check.lines import (
    EVENT_DECODER,
    LONG_INTEGER,
    has_long_integer,
    is_utf8,
)
from reqfold.conformance.check.reader import CHUNK, DECODE_ERRORS, LineReader

MB = 1 << 20
READ_BUFFER = 1 << 20


class ChunkEnvelope(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A chunk line the reader may pass over: no member but these four."""

    type: Literal["assistant/chunk"]
    seq: int
    time: Annotated[int, msgspec.Meta(ge=0)]
    data: msgspec.Raw


RUN_DECODER = msgspec.json.Decoder(list[ChunkEnvelope])
CHUNK_DECODER = msgspec.json.Decoder(ChunkEnvelope)
PREFIX = b'{"type":"assistant/chunk","seq":'
RUN_END = re.compile(rb'\n(?!\{"type":"assistant/chunk","seq":)')
"""The newline that ends a run of lines beginning with a chunk's prefix."""
TWO_VALUES = re.compile(rb"\}[ \t\r]*,[ \t\r]*\{")
"""One value ending and the next beginning within a line."""
SEQ = attrgetter("seq")
ENDS_AS_CHUNK = methodcaller("endswith", b"}}")

Result = tuple[int, int, int]
"""Lines yielded, the sum of their numbers, chunks passed over."""


def today(path: str, size: int = READ_BUFFER) -> Result:
    """`LineReader` as ``reqfold check`` feeds it."""
    with open(path, "rb", buffering=0) as raw:
        log = io.BufferedReader(raw, size)
        reader = LineReader(iter(partial(log.readline, size), b""))
        reader.first()
        yielded = total = 0
        for number, _line, event in reader:
            yielded += 1
            total += number
            reader.expected = None if event is None else event.seq + 1
        return yielded, total, reader.skipped


def _blocks(path: str, size: int) -> Iterator[bytes]:
    with open(path, "rb", buffering=0) as raw:
        yield from iter(partial(raw.read, size), b"")


def _batched(
    path: str, run_of: Callable[[bytes, int], int], size: int = READ_BUFFER
) -> Result:
    """A reader over blocks: per line as `LineReader`, but a run of chunk
    lines at `expected` is offered whole to `run_of` (its line count, or 0:
    read it line by line)."""
    decode = EVENT_DECODER.decode
    yielded = total = skipped = number = 0
    expected: int | None = None
    tail = b""
    first = True
    for block in _blocks(path, size):
        pos = 0
        if tail:  # the line the last block began
            newline = block.find(b"\n")
            if newline < 0:
                tail += block
                continue
            block = tail + block
            pos, tail = 0, b""
        last = block.rfind(b"\n") + 1
        slow_until = 0
        while pos < last:
            if (
                expected is not None
                and pos >= slow_until
                and block.startswith(PREFIX, pos)
            ):
                end = RUN_END.search(block, pos, last)
                stop = last if end is None else end.end()
                run = block[pos:stop]
                count = run_of(run, expected)
                if count:
                    expected += count
                    skipped += count
                    number += count
                    pos = stop
                    continue
                slow_until = stop
            newline = block.find(b"\n", pos)
            line = block[pos : newline + 1]
            pos = newline + 1
            number += 1
            if first:
                first = False
                continue
            try:
                event = decoded = decode(line)
            except DECODE_ERRORS:
                event = None
            else:
                if (
                    decoded.seq == expected
                    and decoded.type == CHUNK
                    and decoded.surfaceOp is decoded.sourceEventSeqs
                    and line[-3:] == b"}}\n"
                    and (line.isascii() or is_utf8(line))
                    and (len(line) < LONG_INTEGER or not has_long_integer(line))
                ):
                    expected += 1
                    skipped += 1
                    continue
            yielded += 1
            total += number
            expected = None if event is None else event.seq + 1
        tail = block[last:]
    if tail and not first:  # a last line without its newline
        yielded += 1
        total += number + 1
    return yielded, total, skipped


def _array_run(run: bytes, expected: int) -> int:
    """The run's line count if every line is a chunk the reader passes over."""
    count = run.count(b"\n")
    try:
        events = RUN_DECODER.decode(b"[" + run[:-1].replace(b"\n", b",") + b"]")
    except DECODE_ERRORS:
        return 0
    if (
        len(events) == count
        and events[0].seq == expected
        and list(map(SEQ, events)) == list(range(expected, expected + count))
        and run.count(b"}}\n") == count
        and TWO_VALUES.search(run) is None
        and run.isascii()
        and not has_long_integer(run)
    ):
        return count
    return 0


def _split_run(run: bytes, expected: int) -> int:
    """The same, each line decoded on its own by `map`."""
    lines = run[:-1].split(b"\n")
    try:
        events = list(map(CHUNK_DECODER.decode, lines))
    except DECODE_ERRORS:
        return 0
    count = len(events)
    if (
        events[0].seq == expected
        and list(map(SEQ, events)) == list(range(expected, expected + count))
        and all(map(ENDS_AS_CHUNK, lines))
        and run.isascii()
        and not has_long_integer(run)
    ):
        return count
    return 0


def hybrid(
    path: str,
    size: int = READ_BUFFER,
    run_of: Callable[[bytes, int], int] = _array_run,
) -> Result:
    """Blocks whose lines `io.BytesIO` splits in C, as `LineReader`'s are;
    after each chunk passed over line by line (the first of a run), the
    rest of the run is offered whole to `run_of` (`_array_run`)."""
    decode = EVENT_DECODER.decode
    yielded = total = skipped = number = 0
    expected: int | None = None
    tail = b""
    first = True
    for piece in _blocks(path, size):
        block = tail + piece if tail else piece
        buffer = io.BytesIO(block)
        tail = b""
        slow_until = 0
        for line in buffer:
            if line[-1:] != b"\n":
                tail = line  # the line the next block ends
                break
            number += 1
            if first:
                first = False
                continue
            try:
                event = decoded = decode(line)
            except DECODE_ERRORS:
                event = None
            else:
                if (
                    decoded.seq == expected
                    and decoded.type == CHUNK
                    and decoded.surfaceOp is decoded.sourceEventSeqs
                    and line[-3:] == b"}}\n"
                    and (line.isascii() or is_utf8(line))
                    and (len(line) < LONG_INTEGER or not has_long_integer(line))
                ):
                    expected += 1
                    skipped += 1
                    pos = buffer.tell()
                    if pos >= slow_until and block.startswith(PREFIX, pos):
                        end = RUN_END.search(block, pos)
                        stop = len(block) if end is None else end.end()
                        run = block[pos:stop]
                        count = run_of(run, expected) if run[-1:] == b"\n" else 0
                        if count:
                            expected += count
                            skipped += count
                            number += count
                            buffer.seek(stop)
                        else:
                            slow_until = stop
                    continue
            yielded += 1
            total += number
            expected = None if event is None else event.seq + 1
    if tail and not first:  # a last line without its newline
        yielded += 1
        total += number + 1
    return yielded, total, skipped


def _counted_run(run: bytes, expected: int) -> int:
    """The run's line count, nothing decoded or proven (not a reader)."""
    return run.count(b"\n")


def array(path: str) -> Result:
    return _batched(path, _array_run)


def split(path: str) -> Result:
    return _batched(path, _split_run)


def _unproven_run(run: bytes, expected: int) -> int:
    """`_array_run` without the proof that each value is one line: wrong."""
    count = run.count(b"\n")
    try:
        events = RUN_DECODER.decode(b"[" + run[:-1].replace(b"\n", b",") + b"]")
    except DECODE_ERRORS:
        return 0
    if len(events) == count and list(map(SEQ, events)) == list(
        range(expected, expected + count)
    ):
        return count
    return 0


TEXT = '{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"ab"}}'


def _event(kind: str, seq: int, data: str = "{}") -> bytes:
    return f'{{"type":"{kind}","seq":{seq},"time":1,"data":{data}}}\n'.encode()


def _chunk(seq: int) -> bytes:
    return _event(CHUNK, seq, TEXT)


def _forged(seq: int) -> list[bytes]:
    """Two damaged lines that, joined by a comma, are two valid chunks."""
    return [
        (
            f'{{"type":"{CHUNK}","seq":{seq},"time":1,"data":{{}}}},'
            f'{{"type":"{CHUNK}","seq":{seq + 1},"time":1,"data":{{"k":[{{"a":{{}}}}\n'
        ).encode(),
        f'{{"type":"{CHUNK}","seq":{seq + 1},"time":1,"data":{{}}}}]}}}}\n'.encode(),
    ]


def _self_check() -> None:
    """The batch readers read as `LineReader` reads whole lines, on runs
    with a bad line at their start, middle and end, in blocks as small as 7
    bytes (a line across blocks is joined first); and the
    proof of boundaries is needed (without it a forged pair is passed over)."""
    opening = [
        b'{"type":"session","version":0,"id":"s","createdAt":1}\n',
        _event("turn/start", 0, '{"turn":1}'),
        _event("step/start", 1, '{"turn":1,"step":1}'),
    ]
    run = [_chunk(seq) for seq in range(2, 12)]
    closing = [_event("assistant/message", 12), *map(_chunk, range(13, 17))]
    bad: dict[str, Callable[[int], bytes]] = {
        "damaged": lambda seq: _chunk(seq)[:-3] + b"\n",
        "other type": lambda seq: _event("tool/call", seq),
        "other seq": lambda seq: _chunk(seq + 5),
        "surface op": lambda seq: _chunk(seq).replace(
            b'"data"', b'"surfaceOp":"append","data"'
        ),
        "utf-8": lambda seq: _chunk(seq).replace(b'"ab"', '"a\u00e9"'.encode()),
        "not utf-8": lambda seq: _chunk(seq).replace(b'"ab"', b'"a\xe9"'),
        "long integer": lambda seq: _chunk(seq).replace(b'"ab"', b"9" * 400),
        "spaced": lambda seq: _chunk(seq).replace(b",", b", "),
    }
    logs = {"valid": [*opening, *run, *closing]}
    for name, spoil in bad.items():
        for at in (0, 5, 9):
            lines = list(run)
            lines[at] = spoil(2 + at)
            logs[f"{name} at {at}"] = [*opening, *lines, *closing]
    forged = [*run[:4], *_forged(6), *run[6:]]
    logs["forged"] = [*opening, *forged, *closing]
    logs["torn"] = [*opening, *run, *closing, b'{"type":"assis']
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "log.jsonl")
        for name, lines in logs.items():
            Path(path).write_bytes(b"".join(lines))
            want = today(path)  # in pieces, `LineReader` passes no line over
            for size in (7, 64, READ_BUFFER):
                got = {
                    "array": _batched(path, _array_run, size),
                    "split": _batched(path, _split_run, size),
                    "hybrid": hybrid(path, size),
                    "hybrid split": hybrid(path, size, _split_run),
                }
                for reader, result in got.items():
                    if result != want:
                        raise SystemExit(
                            f"{reader} reads {name!r} (blocks of {size}) as"
                            f" {result}, LineReader as {want}"
                        )
        Path(path).write_bytes(b"".join(logs["forged"]))
        if _batched(path, _unproven_run) == today(path):
            raise SystemExit("the forged pair does not need the proof of boundaries")


def _run_starts(path: str) -> list[tuple[bytes, int, int]]:
    """Each run of chunk lines within a block: the block, where the run
    begins and its first seq (runs across two blocks left out)."""
    starts: list[tuple[bytes, int, int]] = []
    for block in _blocks(path, READ_BUFFER):
        last = block.rfind(b"\n") + 1
        pos = 0
        while (at := block.find(b"\n" + PREFIX, pos, last)) >= 0:
            end = RUN_END.search(block, at + 1, last)
            if end is None or end.end() >= last:
                break
            digits = at + 1 + len(PREFIX)
            seq = int(block[digits : block.index(b",", digits)])
            starts.append((block, at + 1, seq))
            pos = end.end()
    return starts


def _runs(path: str) -> list[bytes]:
    """Every run of chunk lines in the log, as arrays ready to decode."""
    runs: list[bytes] = []
    current: list[bytes] = []
    with open(path, "rb") as log:
        for line in log:
            if line.startswith(PREFIX):
                current.append(line[:-1])
            elif current:
                runs.append(b"[" + b",".join(current) + b"]")
                current = []
    if current:
        runs.append(b"[" + b",".join(current) + b"]")
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=float, default=32, help="log size (MB)")
    parser.add_argument("--repeats", type=int, default=9, help="runs of each")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    _self_check()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "harness.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            SHAPES["harness"](out, int(args.mb * MB), seed=args.seed)
        readers: dict[str, Callable[[str], Result]] = {
            "today": today,
            "array": array,
            "split": split,
            "hybrid": hybrid,
            "hybrid split": partial(hybrid, run_of=_split_run),
        }
        results = {name: reader(path) for name, reader in readers.items()}
        if len(set(results.values())) != 1:
            raise SystemExit(f"the readers disagree: {results}")
        runs = _runs(path)

        def bound(_path: str) -> Result:
            decode = RUN_DECODER.decode
            for run in runs:
                decode(run)
            return results["today"]

        readers["bound"] = bound
        starts = _run_starts(path)

        def run_path(_path: str) -> Result:
            refused = 0
            for block, pos, seq in starts:
                end = RUN_END.search(block, pos)
                run = block[pos : len(block) if end is None else end.end()]
                refused += not _array_run(run, seq)
            if refused:
                raise SystemExit(f"the run path refused {refused} runs")
            return results["today"]

        readers["run path"] = run_path
        bare = os.path.join(folder, "no-chunks.jsonl")
        with open(path, "rb") as log, open(bare, "wb") as stripped:
            stripped.writelines(line for line in log if not line.startswith(PREFIX))
        readers["no chunks"] = lambda _path: today(bare)
        readers["found"] = lambda path: _batched(path, _counted_run)
        times: dict[str, list[float]] = {name: [] for name in readers}
        for _ in range(args.repeats):
            for name, reader in readers.items():
                start = time.process_time()
                reader(path)
                times[name].append(time.process_time() - start)
        yielded, _, skipped = results["today"]
        print(
            f"harness {os.path.getsize(path) / MB:.1f} MB: {yielded} lines"
            f" yielded, {skipped} chunks passed over in {len(runs)} runs;"
            f" CPU s, median of {args.repeats}; load"
            f" {os.getloadavg()[0]:.1f}"
        )
        base = statistics.median(times["today"])
        for name, spent in times.items():
            median = statistics.median(spent)
            print(
                f"{name:>12} {median:8.4f} s  {median - base:+8.4f} s against today"
                f"  ({(median - base) / skipped * 1e9:+6.0f} ns a chunk)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
