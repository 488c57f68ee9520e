"""A scenario run's evidence as snapshot data (`conformance.harness.evidence`)."""

from __future__ import annotations

from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.snapshots.normalize import session_snapshot
from reqfold.fakes import dump_captured_request
from reqfold.reference.json_values import JsonObject


def snapshot_name(evidence: Evidence) -> str:
    """``scenario@revision``, as in the check ids of ``reqfold run``."""
    return f"{evidence.scenario.id}@{evidence.revision.value}"


def evidence_snapshot(evidence: Evidence) -> JsonObject:
    """The run's log and requests, normalized, each request with its instance.

    The folder the log was written in is masked as ``<workdir>``: it is a
    temporary folder unless ``--keep`` named one.
    """
    snapshot = session_snapshot(
        log=evidence.log,
        requests=[dump_captured_request(capture) for capture in evidence.captures],
        instances=evidence.capture_instances,
        replace={str(evidence.log_path.parent): "<workdir>"},
    )
    if evidence.log_left_on_disk:  # not read whole: say so, never show it empty
        snapshot["log"] = [
            {
                "not read": f"the log is {evidence.log_bytes} bytes, larger than"
                " the suite holds in memory"
            }
        ]
    return snapshot
