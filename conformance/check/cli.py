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
import io
import os
import shutil
import sys
import tempfile
from collections import Counter
from contextlib import ExitStack, suppress
from functools import partial
from typing import Any, TextIO

from reqfold.conformance.cache import options as cache_options
from reqfold.conformance.check import (
    RECONSTRUCTION_RULES,
    CaptureUnreadable,
    FileReport,
    check_lines,
    combined_status,
    read_captures,
    render_json,
    render_text,
)
from reqfold.conformance.check.capture_dialect import uncompared_note
from reqfold.conformance.check.file_kind import (
    SNIFFED_BYTES,
    SNIFFED_LINES,
    not_a_log,
)
from reqfold.conformance.check.revision_inference import RevisionRuledOut
from reqfold.conformance.usage import say_usage_error
from reqfold.reference.revisions import Revision

PROG = "reqfold check"
"""The command, as its usage errors name it."""

READ_BUFFER = 1 << 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``reqfold check``, the cache judgement's too.

    The judgement's options come from `reqfold.conformance.cache.options`,
    which imports neither the judgement nor the fake: a ``reqfold check
    LOG`` never pays for them (`run` imports the judgement when
    ``--requests`` comes alone).
    """
    _add_log_arguments(parser)
    cache_options.add_arguments(parser)


def _add_log_arguments(parser: argparse.ArgumentParser) -> None:
    """The log check's own arguments."""
    parser.add_argument(
        "logs",
        nargs="*",
        metavar="LOG.jsonl",
        help="session files ('-': stdin); none with --requests: judge the cache"
        " from the requests alone (docs/cache.md)",
    )
    parser.add_argument(
        "--requests",
        metavar="CAPTURE.jsonl",
        help="requests captured on the wire for the (single) log: check that each"
        " equals what the log rebuilds for its step (requests in the anthropic or"
        " openai-responses dialect are left out, with a note)",
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


def _judge_the_cache(args: argparse.Namespace) -> int:
    """``--requests`` alone: the cache judgement, imported now."""
    from reqfold.conformance.cache import cli as cache_cli

    return cache_cli.run_requests(args)


STDIN = "-"
"""The log name that reads standard input."""


class _RequestsUnreadable(Exception):
    """The ``--requests`` file cannot be opened (the message says why)."""


class _NotALog(Exception):
    """The file is another kind of file (`not_a_log` says which)."""


def _sniff(source: str | int, requests_given: bool) -> None:
    """Raise `_NotALog` when the first lines of `source` show it is no log."""
    if not isinstance(source, str):
        os.lseek(source, 0, os.SEEK_SET)
    with open(
        source, "rb", buffering=READ_BUFFER, closefd=isinstance(source, str)
    ) as top:
        first: list[bytes] = []
        while len(first) < SNIFFED_LINES:
            line = top.readline(SNIFFED_BYTES)
            if not line:
                break
            if not line.endswith(b"\n"):  # cut: skip the rest of the line
                while (rest := top.readline(READ_BUFFER)) and not rest.endswith(b"\n"):
                    pass
            if line.strip():
                first.append(line)
    reason = not_a_log(first, requests_given=requests_given)
    if reason is not None:
        raise _NotALog(reason)


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
    they fit (docs/checker.md, "Revision inference"). The bytes the file
    held when the check started are all that is read: a file appended to
    faster than it is read would never be done.
    """
    _sniff(source, bool(args.requests))
    if isinstance(source, str):
        size = os.stat(source).st_size
    else:
        size = os.fstat(source).st_size
    torn: list[int] = []
    if args.revision:
        report = _check_under(path, source, args, Revision(args.revision), size, torn)
    else:
        try:
            report = _check_under(path, source, args, None, size, torn)
        except RevisionRuledOut as ruled:
            torn.clear()
            revision = ruled.inference.revision
            report = _check_under(path, source, args, revision, size, torn)
            report.summary.revision_source = ruled.inference.describe()
    for line in torn:
        report.notes.append(
            f"--requests {args.requests}: line {line} is a torn last line (no"
            " newline, not JSON): left out, as a torn tail of the log is"
        )
    with suppress(OSError):
        grown = os.stat(source).st_size if isinstance(source, str) else size
        if grown > size:
            report.notes.append(
                f"the file grew while it was checked: the {size} bytes it held"
                " when the check started were checked"
            )
    return report


def _check_under(
    path: str,
    source: str | int,
    args: argparse.Namespace,
    revision: Revision | None,
    size: int,
    torn: list[int],
) -> FileReport:
    """One pass over the first `size` bytes of the log under `revision`
    (None: declared, else inferred); torn capture lines are added to `torn`."""
    with ExitStack() as stack:
        if not isinstance(source, str):
            os.lseek(source, 0, os.SEEK_SET)
        raw = stack.enter_context(
            open(source, "rb", buffering=0, closefd=isinstance(source, str))
        )
        log = io.BufferedReader(_Prefix(raw, size), READ_BUFFER)
        # Lines of at most READ_BUFFER bytes: a longer line comes in pieces,
        # which the checker joins in place, so it is never held twice.
        pieces = iter(partial(log.readline, READ_BUFFER), b"")
        captures = None
        uncompared: Counter[str] = Counter()
        if args.requests:
            try:
                capture = stack.enter_context(open(args.requests, "rb"))
            except OSError as error:
                raise _RequestsUnreadable(error.strerror or str(error)) from None
            captures = read_captures(capture, torn, uncompared)
        report = check_lines(
            pieces,
            path=path,
            revision=revision,
            thorough=args.thorough,
            strict=args.strict,
            captures=captures,
            uncompared=uncompared,
            infer=revision is None,
        )
        if uncompared:
            report.notes.append(
                uncompared_note(
                    args.requests,
                    uncompared,
                    only=not report.summary.reconstructing,
                    rules=RECONSTRUCTION_RULES,
                )
            )
        return report


class _Prefix(io.RawIOBase):
    """The first `size` bytes of the file `raw`, for a `io.BufferedReader`:
    its lines are split in C, and this is called once a buffer (issue 31:
    a Python step per line cost a quarter of the check's time)."""

    def __init__(self, raw: io.FileIO, size: int) -> None:
        super().__init__()
        self._raw = raw
        self._left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            return 0
        with memoryview(buffer) as view:
            count = self._raw.readinto(view[: self._left])
        count = count or 0
        self._left -= count
        return int(count)


def run(args: argparse.Namespace) -> int:
    """Check every log given; print the reports; return the exit status."""
    given = vars(args)
    cache_only = (
        given.get("process_start")
        or given.get("expect_break")
        or given.get("expect_breaks")
        or given.get("fail_on")
    ) or (given.get("max_lost_tokens"), given.get("price")) != (None, None)
    if not args.logs:
        if args.requests:
            return _judge_the_cache(args)
        return say_usage_error(
            PROG,
            "give a session log, or --requests CAPTURE alone"
            " to judge the cache from the requests",
        )
    if cache_only:
        return say_usage_error(
            PROG,
            "--process-start, --expect-break(s), --fail-on,"
            " --max-lost-tokens and --price judge a capture with no log"
            " (--requests alone)",
        )
    if args.requests and len(args.logs) != 1:
        return say_usage_error(
            PROG,
            f"--requests compares one log with its capture; got {len(args.logs)} logs",
        )
    if args.logs.count(STDIN) > 1:
        return say_usage_error(PROG, f"{STDIN!r} (standard input) can be read once")
    statuses = []
    colour = args.format != "json" and _colour_wanted()
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
        except _NotALog as error:
            report = FileReport(path=path, error=f"not a session log: {error}")
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
        text = (
            render_json(report)
            if args.format == "json"
            else render_text(report, colour=colour)
        )
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


def _colour_wanted() -> bool:
    """A terminal's verdict is coloured as ``reqfold run``'s (NO_COLOR aside)."""
    from reqfold.conformance.summary import colour_wanted

    return colour_wanted(sys.stdout, os.environ)


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
