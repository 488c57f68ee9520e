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
from typing import Any, Final

from reqfold.conformance.report.model import FORMAT, RunReport
from reqfold.conformance.report.refusing_json import strict_json_loads
from reqfold.conformance.schema_check import Validator, error_text, first_problem
from reqfold.reference.json_values import JsonObject

SCHEMA_PATH: Final = Path(__file__).resolve().parent / "run-report.schema.json"
"""The JSON Schema (draft 2020-12) of the report."""


class ReportError(ValueError):
    """A file that is not a usable run report (the message says why)."""


def render_json(report: RunReport) -> str:
    """The report as JSON text, members in a fixed order, newline-terminated."""
    return json.dumps(report.dump(), indent=2, ensure_ascii=False) + "\n"


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Validator(schema)


def schema_problem(data: object) -> str | None:
    """How `data` breaks the schema: the first error, with where, and how
    many more (counted lazily, a few at most); None when valid."""
    found = first_problem(_validator(), data)
    if found is None:
        return None
    error, more = found
    where = "".join(f"[{json.dumps(part)}]" for part in error.absolute_path)
    return f"at {where or 'the top'}: {error_text(error)}{more}"


def schema_problems(data: object) -> list[str]:
    """`schema_problem` as a list (none: valid)."""
    problem = schema_problem(data)
    return [] if problem is None else [problem]


def read_report(text: str, *, name: str = "report") -> JsonObject:
    """Parse and check a JSON report; raises `ReportError` saying what is wrong."""
    try:
        data = strict_json_loads(text)
    except ValueError as error:
        why = (
            f"{error.msg.lower()} at line {error.lineno}, column {error.colno}"
            if isinstance(error, json.JSONDecodeError)
            else str(error)
        )
        raise ReportError(
            f"{name} is not JSON: {why}; write one with 'reqfold run --report-json F'"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else None
        raise ReportError(
            f"{name} is not a {FORMAT} report (format: {found!r}); write one with"
            " 'reqfold run --report-json F'"
        )
    problem = schema_problem(data)
    if problem is not None:
        raise ReportError(f"{name} breaks run-report.schema.json {problem}")
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
