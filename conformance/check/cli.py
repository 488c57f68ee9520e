"""``reqfold check``: verify session logs offline (the shell of `conformance.check`).

Opens each log (and the capture given with ``--requests``), streams its
lines through the checker, and prints a report per file (errors on stderr).
Exit status: 0 when no MUST rule is broken (SHOULD findings are warnings
unless ``--strict``), 1 when one is, 2 when a file cannot be read or the
arguments are wrong, 3 when nothing failed but the checker could not check
a line (a bug in reqfold: no verdict).
"""

from __future__ import annotations

import argparse
import errno
import os
import shutil
import sys
import tempfile
from contextlib import ExitStack
from functools import partial
from typing import TextIO

from reqfold.conformance.check import (
    CaptureUnreadable,
    FileReport,
    check_lines,
    combined_status,
    read_captures,
    render_json,
    render_text,
)
from reqfold.conformance.check.revision_inference import RevisionRuledOut
from reqfold.reference.revisions import Revision

READ_BUFFER = 1 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``reqfold check``."""
    parser.add_argument(
        "logs", nargs="+", metavar="LOG.jsonl", help="session files ('-': stdin)"
    )
    parser.add_argument(
        "--requests",
        metavar="CAPTURE.jsonl",
        help="requests captured on the wire for the (single) log: check that each"
        " equals what the log rebuilds for its step",
    )
    parser.add_argument(
        "--revision",
        choices=[r.value for r in Revision],
        help="read the logs under this revision (default: the storage line's"
        " revision, else the one the header events fit, else session-prefix)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="SHOULD findings fail the check too"
    )
    parser.add_argument(
        "--thorough",
        action="store_true",
        help="also decode assistant/chunk bodies fully (duplicate keys, number"
        " ranges); about three times slower",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format"
    )


STDIN = "-"
"""The log name that reads standard input."""


class _RequestsUnreadable(Exception):
    """The ``--requests`` file cannot be opened (the message says why)."""


def _check_one(path: str, args: argparse.Namespace) -> FileReport:
    revision = Revision(args.revision) if args.revision else None
    if path == STDIN or (revision is None and not os.path.isfile(path)):
        # A pipe or a terminal reads once: a log whose revision is inferred
        # may need a second pass (`_check_stream`). Keep it in a temporary file.
        with tempfile.TemporaryFile() as spool:
            if path == STDIN:
                if sys.stdin is None:  # started with stdin closed
                    raise OSError(errno.EBADF, "standard input is closed")
                shutil.copyfileobj(sys.stdin.buffer, spool, READ_BUFFER)
            else:
                with open(path, "rb", buffering=READ_BUFFER) as source:
                    shutil.copyfileobj(source, spool, READ_BUFFER)
            spool.seek(0)
            return _check_stream(path, spool.fileno(), args)
    return _check_stream(path, path, args)


def _check_stream(path: str, source: str | int, args: argparse.Namespace) -> FileReport:
    """Check the log at `source` (a path, or a seekable descriptor), named `path`.

    Without ``--revision`` the revision is inferred in the check's own pass;
    a log whose header events rule out ``session-prefix`` only after
    judgements that depend on it is checked once more, under the revision
    they fit (docs/checker.md, "Revision inference").
    """
    if args.revision:
        return _check_under(path, source, args, Revision(args.revision))
    try:
        return _check_under(path, source, args, None)
    except RevisionRuledOut as ruled:
        report = _check_under(path, source, args, ruled.inference.revision)
        report.summary.revision_source = ruled.inference.describe()
        return report


def _check_under(
    path: str, source: str | int, args: argparse.Namespace, revision: Revision | None
) -> FileReport:
    """One pass over the log under `revision` (None: declared, else inferred)."""
    with ExitStack() as stack:
        if not isinstance(source, str):
            os.lseek(source, 0, os.SEEK_SET)
        log = stack.enter_context(
            open(source, "rb", buffering=READ_BUFFER, closefd=isinstance(source, str))
        )
        # Lines of at most READ_BUFFER bytes: a longer line comes in pieces,
        # which the checker joins in place, so it is never held twice.
        pieces = iter(partial(log.readline, READ_BUFFER), b"")
        captures = None
        if args.requests:
            try:
                capture = stack.enter_context(open(args.requests, "rb"))
            except OSError as error:
                raise _RequestsUnreadable(error.strerror or str(error)) from None
            captures = read_captures(capture)
        return check_lines(
            pieces,
            path=path,
            revision=revision,
            thorough=args.thorough,
            strict=args.strict,
            captures=captures,
            infer=revision is None,
        )


def run(args: argparse.Namespace) -> int:
    """Check every log given; print the reports; return the exit status."""
    if args.requests and len(args.logs) != 1:
        print(
            "reqfold check: error: --requests compares one log with its capture;"
            f" got {len(args.logs)} logs",
            file=sys.stderr,
        )
        return 2
    if args.logs.count(STDIN) > 1:
        print(
            f"reqfold check: error: {STDIN!r} (standard input) can be read once",
            file=sys.stderr,
        )
        return 2
    statuses = []
    for path in args.logs:
        try:
            report = _check_one(path, args)
        except OSError as error:
            report = FileReport(
                path=path, error=f"cannot read: {error.strerror or error}"
            )
        except _RequestsUnreadable as error:
            report = FileReport(
                path=path, error=f"--requests {args.requests}: cannot read: {error}"
            )
        except CaptureUnreadable as error:
            report = FileReport(
                path=path, error=f"{args.requests}: not a capture of requests: {error}"
            )
        statuses.append(report.status)
        if report.error is not None:
            # said once, on stderr; the JSON form still gives one object per log
            _emit(f"reqfold check: {path}: {report.error}", sys.stderr)
            if args.format != "json":
                continue
        text = render_json(report) if args.format == "json" else render_text(report)
        try:
            _emit(text, sys.stdout)
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, with the status
            # so far; stdout goes to devnull so the exit flush cannot fail.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            return combined_status(statuses)
    return combined_status(statuses)


def _emit(text: str, stream: TextIO) -> None:
    """Print one report; a lone surrogate in a quoted value is escaped."""
    try:
        print(text, file=stream, flush=True)
    except UnicodeEncodeError:
        print(
            text.encode("utf-8", "backslashreplace").decode("utf-8"),
            file=stream,
            flush=True,
        )


def check_one(path: str, args: argparse.Namespace) -> FileReport:
    """Check one log as ``reqfold check`` does (its arguments in `args`),
    less the printing; `benchmarks/check_throughput.py` times this. Raises
    `OSError` when the log cannot be read."""
    return _check_one(path, args)
