"""What ``reqfold run --snapshot-dir`` does with each scenario run's evidence.

`SnapshotRecorder.record` turns the evidence into snapshot data
(`reqfold.conformance.snapshots.evidence`) and compares it with the folder
(`reqfold.conformance.snapshots.store`); `report` is the run's "Snapshots" section;
`exit_status` applies ``--snapshot-strict``. Drift is reported, never
judged: the spec allows a harness to change what it sends between versions,
so a drift leaves the verdict alone unless the user asks for
``--snapshot-strict``, which makes a conformant run that drifted (or whose
snapshots could not be read or written) exit 1. docs/snapshots.md.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.snapshots.evidence import evidence_snapshot, snapshot_name
from reqfold.conformance.snapshots.store import (
    Comparison,
    SnapshotStore,
    Status,
    file_name,
)

MAX_DIFF_LINES = 40
"""Diff lines shown per drifted snapshot (syrupy's diff shows a window
around the first change; `MAX_MEMBERS` names the rest)."""

MAX_MEMBERS = 20
"""Changed members named per drifted snapshot."""

DRIFTED = 1
"""The exit status ``--snapshot-strict`` gives a conformant run that drifted."""


class SnapshotRecorder:
    """Compares each scenario run with its stored snapshot; keeps the results."""

    def __init__(self, store: SnapshotStore, *, strict: bool = False) -> None:
        self.store = store
        self.strict = strict
        self.results: list[Comparison] = []

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SnapshotRecorder | None:
        """The recorder the options ask for, or None without ``--snapshot-dir``."""
        folder = getattr(args, "snapshot_dir", None)
        if folder is None:
            return None
        store = SnapshotStore(
            Path(folder), update=bool(getattr(args, "snapshot_update", False))
        )
        return cls(store, strict=bool(getattr(args, "snapshot_strict", False)))

    def record(self, evidence: Evidence) -> None:
        """Compare one run's evidence with its snapshot. Never raises: a bug
        of ours costs this snapshot an error, not the run."""
        name = snapshot_name(evidence)
        try:
            result = self.store.compare(name, evidence_snapshot(evidence))
        except Exception as bug:
            result = Comparison(
                name=name,
                status=Status.ERROR,
                path=self.store.folder / file_name(name),
                message=f"the suite failed to snapshot this run:"
                f" {type(bug).__name__}: {bug}",
            )
        self.results.append(result)

    @property
    def problems(self) -> list[Comparison]:
        """Drift and errors: what ``--snapshot-strict`` fails the run on."""
        return [r for r in self.results if r.status in (Status.DRIFT, Status.ERROR)]

    def report(self, *, detailed: int | None = None) -> list[str]:
        """The "Snapshots" section of the run's output, as lines.

        With `detailed`, only that many changed snapshots get their diff;
        the rest get one line each (52 drifted snapshots once printed 985
        lines before the verdict)."""
        tally = Counter(result.status for result in self.results)
        counts = ", ".join(f"{tally[s]} {s.value}" for s in Status if tally[s])
        compared = {result.path.name for result in self.results}
        others = len(self.store.stored_names() - compared)
        head = f"Snapshots in {self.store.folder}: {counts or 'none compared'}"
        if others:
            head += f" ({others} stored snapshot(s) not compared in this run)"
        lines = [head]
        shown = 0
        for result in self.results:
            if result.status in (Status.SAME, Status.NEW):
                continue
            if detailed is not None and shown >= detailed:
                lines.append(self._describe(result)[0])
                continue
            shown += 1
            lines.extend(self._describe(result))
        changed = sum(
            1 for r in self.results if r.status not in (Status.SAME, Status.NEW)
        )
        if detailed is not None and changed > detailed:
            lines.append(
                f"  (the diffs of the first {detailed} only: --show all prints"
                f" all {changed})"
            )
        drifted = sum(1 for r in self.results if r.status is Status.DRIFT)
        if drifted:
            lines.append(
                f"  {drifted} scenario run(s) behave differently from their"
                " snapshots. Drift is not a verdict: --snapshot-update accepts it."
            )
        if self.strict and self.problems:
            lines.append(
                "  --snapshot-strict: a run that is otherwise conformant exits 1"
                " on drift or a snapshot error."
            )
        return lines

    def _describe(self, result: Comparison) -> list[str]:
        head = f"  {result.status.value.upper():<8} {result.name}"
        indent = " " * 11
        if result.status is Status.ERROR and not result.diff:
            return [f"{head}: {result.message}", f"{indent}{result.path}"]
        if result.where:
            head += f": first change at {result.where}"
        lines = [head, f"{indent}{result.path}"]
        if result.message:
            lines.append(f"{indent}{result.message}")
        shown = result.diff[:MAX_DIFF_LINES]
        lines.extend(f"{indent}{line}".rstrip() for line in shown)
        if len(result.diff) > len(shown):
            lines.append(f"{indent}... {len(result.diff) - len(shown)} more diff lines")
        if result.changed:
            named = result.changed[:MAX_MEMBERS]
            more = len(result.changed) - len(named)
            lines.append(
                f"{indent}changed ({len(result.changed)}): {', '.join(named)}"
                + (f", and {more} more" if more else "")
            )
        return lines

    def exit_status(self, status: int) -> int:
        """The run's exit status, with ``--snapshot-strict`` applied."""
        if self.strict and status == 0 and self.problems:
            return DRIFTED
        return status
