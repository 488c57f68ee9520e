"""``reqfold check --requests CAPTURE`` with no log: the cache judgement's shell.

Reads the capture line by line (`capture.read_capture_lines`), judges it
(`judge.judge_cache`) and prints the timeline, the breaks, the findings
and one verdict (or the JSON form). Exit status: 0 conformant, 1 a MUST
rule or a gate broken (a SHOULD too with ``--strict``), 2 bad arguments or
a capture that cannot be read, 3 no request to judge.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Mapping, Set

from reqfold.conformance.cache.capture import (
    CapturedCall,
    CaptureLineError,
    read_capture_lines,
)
from reqfold.conformance.cache.declarations import (
    DeclarationError,
    read_expected_breaks,
)
from reqfold.conformance.cache.judge import judge_cache
from reqfold.conformance.cache.model import ProcessStart
from reqfold.conformance.cache.output import (
    NO_VERDICT,
    cache_status,
    judgement_json,
    render_text,
)
from reqfold.conformance.output import ReaderMayLeave
from reqfold.conformance.summary import colour_wanted


def named_starts(starts: list[ProcessStart]) -> list[ProcessStart]:
    """Process starts in index order, from a first one at index 0; unnamed,
    so the judgement names them `process 1`, `process 2`, ... with the
    capture's own marks among them."""
    ordered = sorted(starts, key=lambda start: start.first_index)
    if not ordered or ordered[0].first_index > 0:
        ordered.insert(0, ProcessStart(first_index=0, name="", kind="first"))
    return ordered


def declared_breaks(args: argparse.Namespace) -> dict[int, str] | None:
    """``--expect-breaks FILE`` then each ``--expect-break`` (which wins); None
    when the file cannot be read or holds a bad line (said in one line)."""
    declared: dict[int, str] = {}
    if args.expect_breaks is not None:
        try:
            with open(args.expect_breaks, encoding="utf-8") as file:
                declared = read_expected_breaks(file)
        except OSError as error:
            print(
                f"reqfold check: --expect-breaks {args.expect_breaks}: cannot read:"
                f" {error.strerror or error}",
                file=sys.stderr,
            )
            return None
        except (DeclarationError, UnicodeDecodeError) as error:
            print(
                f"reqfold check: --expect-breaks {args.expect_breaks}: {error}",
                file=sys.stderr,
            )
            return None
    declared.update(args.expect_break)
    return declared


def _noting_indices(
    calls: Iterator[CapturedCall], indices: set[int]
) -> Iterator[CapturedCall]:
    for call in calls:
        indices.add(call.index)
        yield call


def unheld_index(
    args: argparse.Namespace, expected: Mapping[int, str], indices: Set[int]
) -> str | None:
    """What names a request index the capture does not hold, in one line, or
    None: a process start or an expected break there would be silently moot."""
    held = (
        f"its indices run {min(indices)} to {max(indices)}"
        if indices
        else "it holds no request"
    )
    named = [
        *(("--process-start", start.first_index) for start in args.process_start),
        *(("--expect-break", index) for index, _ in args.expect_break),
        *((f"--expect-breaks {args.expect_breaks}", index) for index in expected),
    ]
    for option, index in named:
        if index not in indices:
            return (
                f"{option}: the capture {args.requests} holds no request {index}"
                f" ({held})"
            )
    for start in args.process_start:
        if start.first_index == min(indices):
            return (
                f"--process-start {start.first_index}:{start.kind}: the capture's"
                " first request starts the first process already"
            )
    return None


def repeated_declaration(args: argparse.Namespace) -> str | None:
    """An index given twice to ``--process-start`` or ``--expect-break``, in
    one line, or None: the last would silently win over the first."""
    for option, given in (
        ("--process-start", [s.first_index for s in args.process_start]),
        ("--expect-break", [index for index, _ in args.expect_break]),
    ):
        seen: set[int] = set()
        for index in given:
            if index in seen:
                return f"{option}: index {index} is given twice; give it once"
            seen.add(index)
    return None


def run_requests(args: argparse.Namespace) -> int:
    """Judge the capture named by ``--requests``; print; return the status."""
    if (repeated := repeated_declaration(args)) is not None:
        print(f"reqfold check: {repeated}", file=sys.stderr)
        return 2
    expected = declared_breaks(args)
    if expected is None:
        return 2
    indices: set[int] = set()
    try:
        with open(args.requests, "rb") as capture:
            judgement = judge_cache(
                _noting_indices(read_capture_lines(capture), indices),
                starts=named_starts(args.process_start) if args.process_start else (),
                starts_by_key=not args.process_start,
                expected=expected,
                fail_on=args.fail_on,
                max_lost_tokens=args.max_lost_tokens,
            )
    except OSError as error:
        print(
            f"reqfold check: --requests {args.requests}: cannot read:"
            f" {error.strerror or error}",
            file=sys.stderr,
        )
        return 2
    except CaptureLineError as error:
        print(f"reqfold check: {args.requests}: {error}", file=sys.stderr)
        return 2
    if (unheld := unheld_index(args, expected, indices)) is not None:
        print(f"reqfold check: {unheld}", file=sys.stderr)
        return 2
    # A reader that leaves (``| head -c 600``) is no verdict of the harness:
    # the rest is dropped quietly and the status stands.
    stdout = ReaderMayLeave(sys.stdout)
    status = cache_status(judgement, strict=args.strict)
    if args.format == "json":
        document = judgement_json(judgement, args.price, strict=args.strict)
        print(json.dumps(document, ensure_ascii=True, indent=1), file=stdout)
    else:
        text = render_text(
            judgement,
            strict=args.strict,
            price=args.price,
            colour=colour_wanted(sys.stdout, os.environ),
        )
        if status == NO_VERDICT:  # nothing was judged: the verdict line alone
            text = text.rstrip("\n").rsplit("\n", 1)[-1]
        print(text, file=stdout)
    stdout.flush()
    return status
