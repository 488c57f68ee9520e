"""Reading the JSON report ``reqfold probe --report-json`` writes, for the
probe's gallery tests: what a check found is read from its fields, never
matched in the terminal output (docs/reports.md, "A probe's report").
Importable as ``probe_reports`` (`pythonpath = ["tests/support"]`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reqfold.conformance.report.json_report import schema_problems


def read_probe_report(path: Path) -> dict[str, Any]:
    """The JSON report at `path`, which must validate against the schema and
    be a probe's (its one part is ``probe``)."""
    report: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    assert schema_problems(report) == [], schema_problems(report)
    assert report["options"]["parts"] == ["probe"], report["options"]
    return report


def checks_by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The report's checks by id."""
    return {check["id"]: check for check in report["checks"]}


def problems(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The checks that did not pass (nor were skipped), by id."""
    return {
        check["id"]: check
        for check in report["checks"]
        if check["status"] not in ("pass", "skip")
    }
