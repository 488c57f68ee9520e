"""The JSON Schemas of the harness protocol's messages, and checks against them.

One schema per message lives in ``conformance/adapters/schemas/``
(docs/adapter-protocol.md, part 2): the params the suite sends (so an
adapter author can generate types from them) and the results and
notifications an adapter sends, which `check_result` and
`check_notification` validate before the suite believes them. A message
that breaks its schema is a protocol error (no verdict), never a finding
against the harness's behaviour.

The codec methods (part 1) have schemas too, for adapter authors: their
params and the shape of their results (`check_codec_result`); the values
are judged by the vectors.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any, Final

from referencing import Registry, Resource

from reqfold.conformance.schema_check import (
    MAX_NODES,
    Validator,
    first_problem,
    too_large,
)

SCHEMAS_DIR: Final = Path(__file__).resolve().parent / "schemas"

RESULT_SCHEMAS: Final = {
    "initialize": "initialize.result.json",
    "session/open": "session.open.result.json",
    "instance/start": "empty.result.json",
    "instance/send": "empty.result.json",
    "instance/cancel": "empty.result.json",
    "instance/dispose": "empty.result.json",
    "instance/inject": "empty.result.json",
    "instance/update": "empty.result.json",
    "instance/compact": "empty.result.json",
    "contributor/release": "empty.result.json",
}
"""The schema of each harness method's result."""

PARAMS_SCHEMAS: Final = {
    method: f"{method.replace('/', '.')}.params.json"
    for method in RESULT_SCHEMAS
    if method != "initialize"
}
"""The schema of the params the suite sends with each harness method."""

CODEC_METHODS: Final = (
    "codec/canonical",
    "codec/equals",
    "codec/diff",
    "codec/apply",
    "codec/fold",
    "codec/record",
)

CODEC_PARAMS_SCHEMAS: Final = {
    method: f"{method.replace('/', '.')}.params.json" for method in CODEC_METHODS
}
"""The schema of the params the suite sends with each codec method: any JSON
value where a header, delta or event goes (the strict profile sends
malformed ones), the protocol's own params typed."""

CODEC_RESULT_SCHEMAS: Final = {
    method: f"{method.replace('/', '.')}.result.json" for method in CODEC_METHODS
}
"""The shape of each codec method's result. The vectors judge the values;
these schemas document the shapes for adapter authors (docs/vectors.md)."""

NOTIFICATION_SCHEMAS: Final = {
    "contributor/started": "contributor.started.json",
    "turn/ended": "turn.ended.json",
    "tool/started": "tool.started.json",
}


@cache
def registry() -> Registry[Any]:
    """Every schema of the protocol by its $id, so files can refer to each other."""
    resources = []
    for path in sorted(SCHEMAS_DIR.glob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((contents["$id"], Resource.from_contents(contents)))
    registry: Registry[Any] = Registry().with_resources(resources)
    return registry


@cache
def validator(name: str) -> Any:
    """The validator of schema file `name`, with every sibling resolvable
    (`schema_check.Validator`: a linear ``uniqueItems``)."""
    schema = json.loads((SCHEMAS_DIR / name).read_text(encoding="utf-8"))
    return Validator(schema, registry=registry())


def problem(name: str, value: Any) -> str | None:
    """Why `value` breaks schema `name` (the first error, with its path, and
    how many more), or None. A value far larger than any honest message is
    refused unvalidated, so validating never takes more than a moment."""
    if too_large(value):
        return f"breaks {name}: it holds more than {MAX_NODES} JSON values"
    found = first_problem(validator(name), value)
    if found is None:
        return None
    error, more = found
    where = "".join(f"[{part!r}]" for part in error.path) or "the value"
    return f"breaks {name}: at {where}: {error.message[:200]}{more}"


def check_result(method: str, result: Any) -> str | None:
    """Why the adapter's result of `method` breaks its schema, or None."""
    name = RESULT_SCHEMAS.get(method)
    return problem(name, result) if name is not None else None


def check_params(method: str, params: Any) -> str | None:
    """Why params the suite would send break their schema, or None (tests)."""
    name = PARAMS_SCHEMAS.get(method) or CODEC_PARAMS_SCHEMAS.get(method)
    return problem(name, params) if name is not None else None


def check_codec_result(method: str, result: Any) -> str | None:
    """Why a codec method's result breaks its schema, or None."""
    name = CODEC_RESULT_SCHEMAS.get(method)
    return problem(name, result) if name is not None else None


def check_notification(message: Any) -> str | None:
    """Why a notification is unknown or breaks its schema, or None."""
    method = message.get("method") if isinstance(message, dict) else None
    name = NOTIFICATION_SCHEMAS.get(method) if isinstance(method, str) else None
    if name is None:
        return f"unknown notification {str(method)[:80]!r}"
    found = problem(name, message)
    return f"notification {method} {found}" if found else None
