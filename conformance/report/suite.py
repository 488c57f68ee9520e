"""Which suite ran: the reqfold version and a digest of its vectors and scenarios.

Two reports with one digest ran the same vectors and scenarios, so their
checks compare one to one; a different digest says the suite itself
changed between them (``reqfold compare`` says so). The digest covers each
file's path (relative to ``conformance/``) and bytes, in path order: every
file the suite reads, the schemas and the seed logs too. The counts are of
vector and scenario files only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from reqfold.conformance.codec.cases import VECTORS_DIR
from reqfold.conformance.codec.loading import vector_files
from reqfold.conformance.harness.scenarios import SCENARIOS_DIR, scenario_files
from reqfold.reference.json_values import JsonObject


def digest_files(files: Iterable[tuple[str, bytes]]) -> str:
    """``sha256:<hex>`` over ``(name, bytes)`` pairs, in name order."""
    digest = hashlib.sha256()
    for name, data in sorted(files):
        for part in (name.encode("utf-8"), data):
            digest.update(len(part).to_bytes(8, "big"))
            digest.update(part)
    return f"sha256:{digest.hexdigest()}"


def _digested_files(root: Path) -> list[tuple[str, bytes]]:
    """Every file of the suite's data under `root` (schemas and seeds too)."""
    return [
        (path.relative_to(root.parent).as_posix(), path.read_bytes())
        for path in sorted(root.rglob("*.json*"))
        if path.is_file()
    ]


def version() -> str:
    """The installed reqfold version ("unknown" when it is not installed)."""
    try:
        return metadata.version("reqfold")
    except metadata.PackageNotFoundError:
        return "unknown"


def suite_identity() -> JsonObject:
    """The report's ``suite`` member: version, digest, how many files."""
    digested = _digested_files(VECTORS_DIR) + _digested_files(SCENARIOS_DIR)
    return {
        "version": version(),
        "digest": digest_files(digested),
        "vectorFiles": len(vector_files()),
        "scenarioFiles": len(scenario_files()),
    }
