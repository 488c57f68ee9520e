"""The offline log checker behind ``reqfold check`` (issue 5, docs/checker.md).

A sans-IO core: `check_lines` takes the lines of a session file (and,
optionally, the captured requests to compare) and returns a `FileReport`;
`reqfold.conformance.check.cli` is the shell that opens files and prints.

Modules: `findings` (what is reported), `lines` (decoding one line, fast
and strict), `reader` (the lines of a file, numbered and decoded, chunks
no rule reads passed over), `log_rules` (the driver: each event to the
rule machines registered for its type), the rule machines `envelope_rules`,
`turn_rules`, `surface_rules`, `opening_rules` (header events and CACHE-2)
and `request_rules`, `header_rules` (fold and writer contract), `surface`
(the surface and derived history), `reconstruction` (``--requests``),
`report` (text and JSON output).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from reqfold.conformance.check.findings import ERROR, MUST, SHOULD, Finding
from reqfold.conformance.check.lines import as_the_last_line
from reqfold.conformance.check.log_rules import Handler, LogChecker, LogSummary
from reqfold.conformance.check.reconstruction import (
    CapturedRequest,
    CaptureUnreadable,
    Reconstruction,
    read_captures,
)
from reqfold.conformance.check.report import (
    FORMAT,
    FileReport,
    combined_status,
    render_json,
    render_text,
)
from reqfold.reference.revisions import LATEST, Revision

APPLIED_RULES = (
    "CACHE-2",
    "JSON-1",
    "JSONL-1",
    "JSONL-2",
    "JSONL-3",
    "JSONL-4",
    "LOG-1",
    "LOG-2",
    "LOG-3",
    "LOG-4",
    "LOG-5",
    "SURF-1",
    "SURF-2",
    "SURF-4",
    "TURN-1",
    "TURN-2",
    "TURN-3",
    "TURN-4",
    "SNAP-1",
    "FOLD-2",
    "HDR-1",
    "HDR-2",
    "HDR-3",
    "HDR-5",
    "CONFIG-1",
    "CONFIG-2",
    "SYS-1",
    "SYS-3",
    "SYS-5",
    "TOOLS-1",
    "TOOLS-2",
    "TOOLS-3",
    "TOOLS-5",
    "MSGS-1",
    "DELTA-1",
    "WRITER-1",
    "WRITER-2",
    "WRITER-3",
    "WRITER-4",
    "WRITER-5",
    "WRITER-6",
    "PREFIX-2",
    "REQ-2",
    "CHECK-2",
)
"""Every rule a log alone can show broken, each with a fixture that breaks it."""

RECONSTRUCTION_RULES = (
    "REQ-1",
    "REQ-5",
    "REQ-6",
    "WIRE-1",
    "WIRE-3",
    "WIRE-4",
    "WIRE-5",
    "CHECK-1",
)
"""The rules ``--requests`` adds (REQ-3/REQ-4 stand in for REQ-5 by revision)."""


def check_lines(
    lines: Iterable[bytes | bytearray],
    *,
    path: str = "<log>",
    revision: Revision | None = None,
    thorough: bool = False,
    strict: bool = False,
    captures: Iterable[CapturedRequest] | None = None,
    uncompared: Counter[str] | None = None,
    infer: bool = False,
    overrides: Mapping[str, Handler] | None = None,
) -> FileReport:
    """Check the lines of one session file and return its report.

    `lines` are the file's bytes split after each newline; a long line may
    come in pieces (as ``readline(limit)`` gives it), which are joined in
    place, so no line is held twice.

    `revision` None reads the log under its storage line's revision, else
    (`infer`) the one its header events fit, inferred in this same pass,
    else ``session-prefix``.

    `uncompared` counts, by dialect, the captured requests in another
    dialect than chat completions that `captures` leaves out
    (`read_captures` fills it); when there were only such requests, the
    log was compared with nothing, and no step is faulted for finding no
    request (CHECK-1).

    `overrides` replaces the rule machines' handlers of an event type
    (`LogChecker`'s seam for tests that make a rule crash, CHECK-2).

    Raises `CaptureUnreadable` for a capture line that is not a request,
    `RevisionRuledOut` (`infer` only) when a header event rules out the
    revision after judgements that depend on it (check again under the one
    it names), and lets `OSError` from reading `lines` or `captures` through.
    """
    reconstruction = (
        Reconstruction(iter(captures), revision or LATEST, uncompared)
        if captures is not None
        else None
    )
    checker = LogChecker(
        revision=revision,
        thorough=thorough,
        reconstruction=reconstruction,
        infer=infer,
        overrides=overrides,
    )
    report = FileReport(path=path, strict=strict)
    report.collect(checker.check(lines))
    report.summary = checker.summary
    last = checker.summary.lines
    report.findings = [as_the_last_line(item, last) for item in report.findings]
    if reconstruction is not None and reconstruction.uncompared:
        report.summary.requests_uncompared = Counter(reconstruction.uncompared)
        report.summary.reconstructing = not reconstruction.compared_none
    return report


__all__ = [
    "APPLIED_RULES",
    "ERROR",
    "FORMAT",
    "MUST",
    "RECONSTRUCTION_RULES",
    "SHOULD",
    "CaptureUnreadable",
    "CapturedRequest",
    "FileReport",
    "Finding",
    "Handler",
    "LogChecker",
    "LogSummary",
    "check_lines",
    "combined_status",
    "read_captures",
    "render_json",
    "render_text",
]
