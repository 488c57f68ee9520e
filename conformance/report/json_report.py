"""The JSON report (format ``reqfold-run/1``), its JSON Schema, and reading it back.

`render_json` writes a `RunReport` as JSON text; `read_report` reads one
back for ``reqfold compare``, refusing, with a one-line reason, anything
that is not JSON, not this format, or breaks ``run-report.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Final

from jsonschema import Draft202012Validator

from reqfold.conformance.report.model import FORMAT, RunReport
from reqfold.conformance.report.strict_json import strict_json_loads
from reqfold.reference.json_values import JsonObject

SCHEMA_PATH: Final = Path(__file__).resolve().parent / "run-report.schema.json"
"""The JSON Schema (draft 2020-12) of the report."""


class ReportError(ValueError):
    """A file that is not a usable run report (the message says why)."""


def render_json(report: RunReport) -> str:
    """The report as JSON text, members in a fixed order, newline-terminated."""
    return json.dumps(report.dump(), indent=2, ensure_ascii=False) + "\n"


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def schema_problems(data: object) -> list[str]:
    """How `data` breaks the schema, one line each, with where (none: valid)."""
    return [
        f"at {''.join(f'[{part!r}]' for part in error.absolute_path) or 'the top'}:"
        f" {error.message[:200]}"
        for error in sorted(
            _validator().iter_errors(data), key=lambda e: list(map(str, e.path))
        )
    ]


def read_report(text: str, *, name: str = "report") -> JsonObject:
    """Parse and check a JSON report; raises `ReportError` saying what is wrong."""
    try:
        data = strict_json_loads(text)
    except ValueError as error:
        raise ReportError(f"{name} is not JSON: {error}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ReportError(
            f"{name} is not a {FORMAT} report (format: {found!r}); write one with"
            " 'reqfold run --report-json F'"
        )
    problems = schema_problems(data)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ReportError(f"{name} breaks run-report.schema.json {problems[0]}{more}")
    twice = _first_repeated(check["id"] for check in data["checks"])
    if twice is not None:
        raise ReportError(f"{name} lists the check {twice!r} twice")
    twice = _first_repeated(
        f"{trace['scenario']}@{trace['revision']}" for trace in data["scenarios"]
    )
    if twice is not None:
        raise ReportError(f"{name} traces the scenario run {twice!r} twice")
    return data


def _first_repeated(keys: Iterable[str]) -> str | None:
    """The first key that comes again (a comparison by key would keep one)."""
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    return None
