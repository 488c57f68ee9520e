"""Revision inference riding the checker's single pass (issue 31).

A log that declares no revision is read once: the checker narrows the
revisions its header events fit as it folds them, switches in place when
nothing judged so far depends on the revision, and otherwise asks the shell
to read the log again (`RevisionRuledOut`). The oracle is the two-pass way
it replaced: `infer_revision` over the whole log, then a check under the
revision inferred.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from undeclared_logs import STORAGE, USER, one_step_turns

from reqfold.conformance.check import FileReport, check_lines
from reqfold.conformance.check.cli import add_arguments, check_one
from reqfold.conformance.check.revision_inference import (
    RevisionRuledOut,
    infer_revision,
)
from reqfold.reference.revisions import Revision

FIXTURES = Path(__file__).parent / "check_fixtures"


def two_turns(first: dict[str, object], second: dict[str, object]) -> list[bytes]:
    """A valid log of two turns of one step each: the first request's header
    is a snapshot of `first`, the second's the delta `second`; a header
    event is line 5 or line 12."""
    return one_step_turns(
        [("request/header", {"header": first}), ("request/header-delta", second)]
    )


def findings(report: FileReport) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.message) for f in report.findings]


def once(lines: list[bytes]) -> Iterator[bytes]:
    """The lines as a stream that can be read only once."""
    yield from lines


def test_a_suffix_in_the_first_snapshot_is_read_as_request_messages_in_one_pass() -> (
    None
):
    lines = two_turns(
        {"config": {"model": "m"}, "messageSuffix": [USER]},
        {"messageSuffix": []},
    )
    report = check_lines(once(lines), infer=True)
    assert report.summary.revision is Revision.REQUEST_MESSAGES
    assert report.summary.revision_source == (
        "inferred from line 5: a header snapshot carries messageSuffix"
    )
    assert findings(report) == []
    # read as session-prefix, as before the inference, the same log is broken
    assert findings(check_lines(lines)) != []


def test_evidence_after_header_events_without_message_fields_switches_in_place() -> (
    None
):
    lines = two_turns({"config": {"model": "m"}}, {"messageSuffix": [USER]})
    report = check_lines(once(lines), infer=True)
    forced = check_lines(lines, revision=Revision.REQUEST_MESSAGES)
    assert report.summary.revision is Revision.REQUEST_MESSAGES
    assert report.summary.revision_source.startswith("inferred from line 12: ")
    assert findings(report) == findings(forced) == []


def test_evidence_after_a_prefix_that_fit_both_revisions_asks_for_a_second_pass() -> (
    None
):
    lines = two_turns(
        {"config": {"model": "m"}, "messagePrefix": [USER]}, {"messagePrefix": []}
    )
    with pytest.raises(RevisionRuledOut) as ruled:
        check_lines(once(lines), infer=True)
    assert ruled.value.inference.revision is Revision.REQUEST_MESSAGES
    assert ruled.value.inference.line == 12


def test_an_ambiguous_log_stays_session_prefix_and_says_which_revisions_fit() -> None:
    lines = two_turns(
        {"config": {"model": "m"}, "messagePrefix": [USER]},
        {"config": {"model": "n"}},
    )
    report = check_lines(once(lines), infer=True)
    assert report.summary.revision is Revision.SESSION_PREFIX
    assert report.summary.revision_source == (
        "default; not declared, and request-messages and session-prefix fit"
        " (line 5: a header snapshot carries messagePrefix)"
    )


def test_a_declared_revision_is_not_inferred_in_the_pass() -> None:
    declared = STORAGE.replace(b"}\n", b',"revision":"session-prefix"}\n')
    lines = two_turns({"config": {"model": "m"}, "messageSuffix": [USER]}, {})
    report = check_lines(once([declared, *lines[1:]]), infer=True)
    assert report.summary.revision is Revision.SESSION_PREFIX
    assert report.summary.revision_source == "storage line"
    assert "HDR-2" in {rule for rule, _, _ in findings(report)}


def _undeclared(path: Path, folder: Path) -> Path:
    """`path` with the revision taken off its storage line."""
    first, _, rest = path.read_bytes().partition(b"\n")
    try:
        storage = json.loads(first)
    except ValueError:
        storage = None
    if isinstance(storage, dict) and "revision" in storage:
        del storage["revision"]
        first = json.dumps(storage, separators=(",", ":")).encode()
    copy = folder / path.name
    copy.write_bytes(first + b"\n" + rest)
    return copy


ARGUMENTS = argparse.ArgumentParser()
add_arguments(ARGUMENTS)


@pytest.mark.parametrize(
    "fixture", sorted(FIXTURES.glob("*.jsonl")), ids=lambda path: path.stem
)
def test_the_single_pass_judges_every_fixture_as_inferring_first_did(
    fixture: Path, tmp_path: Path
) -> None:
    log = _undeclared(fixture, tmp_path)
    single = check_one(str(log), ARGUMENTS.parse_args([str(log)]))
    with log.open("rb") as lines:
        inference = infer_revision(lines)
    with log.open("rb") as lines:
        oracle = check_lines(
            lines, path=str(log), revision=inference.revision if inference else None
        )
    assert findings(single) == findings(oracle)
    assert single.counts == oracle.counts
    assert single.summary.revision is oracle.summary.revision
    if inference is not None:
        assert single.summary.revision_source == inference.describe()


@pytest.mark.spec("PREFIX-2")
def test_reqfold_check_reads_a_log_again_when_the_evidence_comes_late(
    tmp_path: Path,
) -> None:
    log = tmp_path / "late.jsonl"
    log.write_bytes(
        b"".join(
            two_turns(
                {"config": {"model": "m"}, "messagePrefix": [USER]},
                {"messagePrefix": []},
            )
        )
    )
    report = check_one(str(log), ARGUMENTS.parse_args([str(log)]))
    forced = check_one(
        str(log), ARGUMENTS.parse_args([str(log), "--revision", "request-messages"])
    )
    assert report.summary.revision is Revision.REQUEST_MESSAGES
    assert report.summary.revision_source.startswith("inferred from line 12: ")
    assert findings(report) == findings(forced)
    # read as session-prefix the prefix arm would be a PREFIX-2 failure
    as_default = check_one(
        str(log), ARGUMENTS.parse_args([str(log), "--revision", "session-prefix"])
    )
    assert "PREFIX-2" in {rule for rule, _, _ in findings(as_default)}
    assert "PREFIX-2" not in {rule for rule, _, _ in findings(report)}
