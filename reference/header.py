"""The request header and its algebra: canonical form, equality, diff, apply, fold.

Implements docs/spec.md sections "Header", "Equality", "Deltas" and "Fold"
(HDR-*, EQ-*, DELTA-*, SYS-*, TOOLS-*, CONFIG-*, MSGS-*, FOLD-*).

Theory of operation. A header is everything a request carries besides its
derived history: ``config`` (required), ``system``, ``tools`` and, by
revision, ``messagePrefix``/``messageSuffix``. Its *canonical form* drops
empty optional fields, so ``""``, ``[]`` and absence are one state, and
orders fields ``config, system, tools, messagePrefix, messageSuffix``.

A delta amends a header arm by arm. ``system`` is a line edit (keep the
first ``keepStart`` and last ``keepEnd`` lines of the old prompt, put
``insert`` between); ``tools`` is name-keyed (``added`` at the end,
``removed`` by name, ``changed`` replaced in place); ``config`` and the
message arrays are replaced whole, ``[]`` meaning "back to absent".
``diff_header`` emits an arm exactly when that part differs; the result
need not round-trip (a pure tool reorder cannot be expressed), which is why
the writer (``reqfold.reference.writer``) verifies every delta before logging it.

Everything here is pure: JSON values in, new JSON values out; inputs are
never mutated.
"""

from __future__ import annotations

from collections.abc import Iterable

from reqfold.reference.errors import (
    DeltaBeforeSnapshot,
    DeltaConflict,
    MalformedDelta,
    MalformedEvent,
    MalformedHeader,
    NotJsonValue,
)
from reqfold.reference.json_values import (
    JsonObject,
    check_json_value,
    is_integer,
    json_equal,
)
from reqfold.reference.revisions import LATEST, Revision

Header = JsonObject
"""A request header: ``{"config": {...}, "system"?, "tools"?, ...}``."""

Delta = JsonObject
"""The data of a ``request/header-delta`` event."""

SNAPSHOT = "request/header"
DELTA = "request/header-delta"
SNAPSHOT_REASONS = ("initial", "resume", "fallback")

# ---------------------------------------------------------------- validation


def check_config(
    config: object,
    *,
    error: type[MalformedHeader] | type[MalformedDelta] = MalformedHeader,
) -> None:
    """Raise unless `config` is a call config (CONFIG-1, CONFIG-2)."""
    if not isinstance(config, dict):
        raise error("config must be a JSON object", rule="CONFIG-1")
    if "model" not in config or not isinstance(config["model"], str):
        raise error("config.model must be present and a string", rule="CONFIG-1")
    if "temperature" in config and (
        isinstance(config["temperature"], bool)
        or not isinstance(config["temperature"], int | float)
    ):
        raise error("config.temperature must be a number", rule="CONFIG-2")
    if "maxTokens" in config and not is_integer(config["maxTokens"]):
        raise error("config.maxTokens must be an integer", rule="CONFIG-2")
    if "stop" in config and not (
        isinstance(config["stop"], list)
        and all(isinstance(s, str) for s in config["stop"])
    ):
        raise error("config.stop must be an array of strings", rule="CONFIG-2")
    for key, value in config.items():
        if value is None:
            raise error(
                f"config.{key} is null; absent fields are omitted", rule="HDR-3"
            )


def _check_tools(
    tools: object,
    *,
    field: str,
    error: type[MalformedHeader] | type[MalformedDelta] = MalformedHeader,
) -> list[str]:
    if not isinstance(tools, list):
        raise error(f"{field} must be an array", rule="TOOLS-1")
    names: list[str] = []
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise error(
                f"{field}[{index}] must be an object with a string name", rule="TOOLS-1"
            )
        names.append(tool["name"])
    if len(set(names)) != len(names):
        duplicate = next(n for n in names if names.count(n) > 1)
        raise error(f"{field} names {duplicate!r} twice", rule="TOOLS-2")
    return names


def _check_messages(
    messages: object,
    *,
    field: str,
    error: type[MalformedHeader] | type[MalformedDelta] = MalformedHeader,
) -> None:
    if not isinstance(messages, list):
        raise error(f"{field} must be an array of messages", rule="MSGS-1")
    for index, message in enumerate(messages):
        if not (
            isinstance(message, dict)
            and isinstance(message.get("role"), str)
            and isinstance(message.get("content"), list)
        ):
            raise error(
                f"{field}[{index}] must be a message with a string role and a"
                " content array",
                rule="MSGS-1",
            )


def check_header(header: object, revision: Revision = LATEST) -> None:
    """Raise `MalformedHeader` unless `header` is a header of `revision`."""
    if not isinstance(header, dict):
        raise MalformedHeader("a header must be a JSON object", rule="HDR-1")
    check_json_value(header, what="the header")
    for key in header:
        if key not in revision.header_fields:
            raise MalformedHeader(
                f"unknown header field {key!r} in revision {revision.value}",
                rule="HDR-2",
            )
    for key, value in header.items():
        if value is None:
            raise MalformedHeader(
                f"header field {key!r} is null; absent fields are omitted",
                rule="HDR-3",
            )
    if "config" not in header:
        raise MalformedHeader("a header must have a config", rule="HDR-1")
    check_config(header["config"])
    if "system" in header and not isinstance(header["system"], str):
        raise MalformedHeader("system must be a string", rule="SYS-1")
    if "tools" in header:
        _check_tools(header["tools"], field="tools")
    for field in revision.message_fields:
        if field in header:
            _check_messages(header[field], field=field)


# ---------------------------------------------------------------- canonical form


def canonical_header(header: Header, revision: Revision = LATEST) -> Header:
    """Return the canonical form of `header` (HDR-4, HDR-5).

    Empty ``system``, ``tools`` and message arrays become absent; fields
    come in the order ``config, system, tools, messagePrefix,
    messageSuffix``. Values are shared with the input, not copied.
    """
    check_header(header, revision)
    return project_canonical(header, revision)


def project_canonical(header: Header, revision: Revision = LATEST) -> Header:
    """The canonical projection of a header already known to be well-formed.

    `canonical_header` without the validation walk: for callers that have
    validated the header once (a checker streaming a log) and must not pay
    for it again on every operation.
    """
    result: Header = {"config": header["config"]}
    for field in revision.header_fields[1:]:
        value = header.get(field)
        if value:
            result[field] = value
    return result


def is_canonical(header: Header, revision: Revision = LATEST) -> bool:
    """True when `header` already is its own canonical form (key order too)."""
    return json_equal(header, canonical_header(header, revision))


def header_equals(a: Header, b: Header, revision: Revision = LATEST) -> bool:
    """Two headers are equal when their canonical forms are equal (EQ-1..EQ-3)."""
    return json_equal(canonical_header(a, revision), canonical_header(b, revision))


# ---------------------------------------------------------------- system lines


def system_lines(system: str | None) -> list[str]:
    """Split a system prompt into lines on ``\\n`` only; absent is no lines (SYS-2)."""
    return [] if system is None else system.split("\n")


def join_system_lines(lines: list[str]) -> str | None:
    """Join lines with ``\\n``; no lines is absent (SYS-2)."""
    return "\n".join(lines) if lines else None


def diff_system(prev: str | None, next_: str | None) -> JsonObject:
    """Encode the line edit from `prev` to `next_` (SYS-3)."""
    a, b = system_lines(prev), system_lines(next_)
    keep_start = 0
    limit = min(len(a), len(b))
    while keep_start < limit and a[keep_start] == b[keep_start]:
        keep_start += 1
    keep_end = 0
    tail_limit = min(len(a), len(b)) - keep_start
    while (
        keep_end < tail_limit and a[len(a) - 1 - keep_end] == b[len(b) - 1 - keep_end]
    ):
        keep_end += 1
    return {
        "keepStart": keep_start,
        "keepEnd": keep_end,
        "insert": b[keep_start : len(b) - keep_end],
    }


def apply_system(prev: str | None, arm: JsonObject) -> str | None:
    """Apply a system arm to `prev` (SYS-4); raises `DeltaConflict` if out of range."""
    a = system_lines(prev)
    keep_start, keep_end = int(arm["keepStart"]), int(arm["keepEnd"])
    if keep_start + keep_end > len(a):
        raise DeltaConflict(
            f"system arm keeps {keep_start}+{keep_end} lines of a {len(a)}-line prompt",
            rule="SYS-5",
        )
    return join_system_lines(
        a[:keep_start] + list(arm["insert"]) + a[len(a) - keep_end :]
    )


# ---------------------------------------------------------------- tools


def diff_tools(prev: list[JsonObject], next_: list[JsonObject]) -> JsonObject:
    """Encode the name-keyed tool edit from `prev` to `next_` (TOOLS-3)."""
    before = {tool["name"]: tool for tool in prev}
    after_names = {tool["name"] for tool in next_}
    return {
        "added": [tool for tool in next_ if tool["name"] not in before],
        "removed": [tool["name"] for tool in prev if tool["name"] not in after_names],
        "changed": [
            tool
            for tool in next_
            if tool["name"] in before and not json_equal(before[tool["name"]], tool)
        ],
    }


def apply_tools(prev: list[JsonObject], arm: JsonObject) -> list[JsonObject]:
    """Apply a tools arm (TOOLS-4); raises `DeltaConflict` when names do not fit."""
    names = [tool["name"] for tool in prev]
    removed: list[str] = arm["removed"]
    changed = {tool["name"]: tool for tool in arm["changed"]}
    for name in removed:
        if name not in names:
            raise DeltaConflict(
                f"tools arm removes {name!r}, which is absent", rule="TOOLS-5"
            )
    for name in changed:
        if name not in names or name in removed:
            raise DeltaConflict(
                f"tools arm changes {name!r}, which is absent or removed",
                rule="TOOLS-5",
            )
    kept = [
        changed.get(tool["name"], tool) for tool in prev if tool["name"] not in removed
    ]
    kept_names = {tool["name"] for tool in kept}
    for tool in arm["added"]:
        if tool["name"] in kept_names:
            raise DeltaConflict(
                f"tools arm adds {tool['name']!r}, which is already present",
                rule="TOOLS-5",
            )
    return kept + list(arm["added"])


# ---------------------------------------------------------------- delta shape


def check_delta(
    delta: object, revision: Revision = LATEST, *, values_checked: bool = False
) -> None:
    """Raise `MalformedDelta` unless `delta` is a delta of `revision` (DELTA-1).

    `values_checked`: the caller has shown that `delta` is a JSON value
    (JSON-1), so the walk over every value (most of the cost on a delta of
    tool schemas) is skipped and only the arms' shapes are checked.
    """
    if not isinstance(delta, dict):
        raise MalformedDelta("a delta must be a JSON object", rule="DELTA-1")
    if not values_checked:
        check_json_value(delta, what="the delta")
    for key in delta:
        if key not in revision.delta_arms:
            raise MalformedDelta(
                f"unknown delta arm {key!r} in revision {revision.value}",
                rule="DELTA-1",
            )
    if "system" in delta:
        arm = delta["system"]
        if not (
            isinstance(arm, dict)
            and set(arm) == {"keepStart", "keepEnd", "insert"}
            and is_integer(arm["keepStart"])
            and is_integer(arm["keepEnd"])
            and arm["keepStart"] >= 0
            and arm["keepEnd"] >= 0
            and isinstance(arm["insert"], list)
            and all(
                isinstance(line, str) and "\n" not in line for line in arm["insert"]
            )
        ):
            raise MalformedDelta(
                "the system arm must be {keepStart, keepEnd, insert} with"
                " non-negative integers and single-line strings",
                rule="SYS-3",
            )
    if "tools" in delta:
        arm = delta["tools"]
        if not (isinstance(arm, dict) and set(arm) == {"added", "removed", "changed"}):
            raise MalformedDelta(
                "the tools arm must be {added, removed, changed}", rule="TOOLS-3"
            )
        _check_tools(arm["added"], field="tools.added", error=MalformedDelta)
        _check_tools(arm["changed"], field="tools.changed", error=MalformedDelta)
        removed = arm["removed"]
        if not (isinstance(removed, list) and all(isinstance(n, str) for n in removed)):
            raise MalformedDelta(
                "tools.removed must be an array of names", rule="TOOLS-3"
            )
        if len(set(removed)) != len(removed):
            raise MalformedDelta("tools.removed names a tool twice", rule="TOOLS-3")
    if "config" in delta:
        check_config(delta["config"], error=MalformedDelta)
    for field in revision.message_fields:
        if field in delta:
            _check_messages(delta[field], field=field, error=MalformedDelta)


# ---------------------------------------------------------------- diff and apply


def diff_header(
    prev: Header, next_: Header, revision: Revision = LATEST
) -> Delta | None:
    """Encode the change from `prev` to `next_`; None when they are equal (DELTA-2).

    Arms come in the order ``system, tools, config, messagePrefix,
    messageSuffix``, each present exactly when that part differs. The
    result may fail to round-trip (see `delta_round_trips`).
    """
    return diff_canonical(
        canonical_header(prev, revision), canonical_header(next_, revision), revision
    )


def diff_canonical(a: Header, b: Header, revision: Revision = LATEST) -> Delta | None:
    """`diff_header` for two headers already in canonical form (no validation)."""
    delta: Delta = {}
    if a.get("system") != b.get("system"):
        delta["system"] = diff_system(a.get("system"), b.get("system"))
    if not json_equal(a.get("tools", []), b.get("tools", [])):
        delta["tools"] = diff_tools(a.get("tools", []), b.get("tools", []))
    if not json_equal(a["config"], b["config"]):
        delta["config"] = b["config"]
    for field in revision.message_fields:
        if not json_equal(a.get(field, []), b.get(field, [])):
            delta[field] = b.get(field, [])
    return delta or None


def apply_header_delta(
    prev: Header, delta: Delta, revision: Revision = LATEST
) -> Header:
    """Apply `delta` to `prev` and return the canonical result (DELTA-3).

    Key presence decides, not truthiness: ``"messagePrefix": []`` in a
    delta removes the prefix.
    """
    return apply_to_canonical(canonical_header(prev, revision), delta, revision)


def apply_to_canonical(
    base: Header,
    delta: Delta,
    revision: Revision = LATEST,
    *,
    values_checked: bool = False,
) -> Header:
    """`apply_header_delta` for a base already in canonical form.

    The delta is validated (DELTA-1; its values too unless `values_checked`,
    as `check_delta`); the base is trusted. The result is canonical without
    a second validation walk: every part comes from the valid base or a
    validated arm, and the arm functions refuse conflicts.
    """
    check_delta(delta, revision, values_checked=values_checked)
    result: Header = {"config": delta.get("config", base["config"])}
    system = (
        apply_system(base.get("system"), delta["system"])
        if "system" in delta
        else (base.get("system"))
    )
    if system is not None:
        result["system"] = system
    result["tools"] = (
        apply_tools(base.get("tools", []), delta["tools"])
        if "tools" in delta
        else base.get("tools", [])
    )
    for field in revision.message_fields:
        result[field] = delta[field] if field in delta else base.get(field, [])
    return project_canonical(result, revision)


def delta_round_trips(
    prev: Header, delta: Delta, next_: Header, revision: Revision = LATEST
) -> bool:
    """True when applying `delta` to `prev` gives a header equal to `next_`."""
    try:
        applied = apply_header_delta(prev, delta, revision)
    except DeltaConflict:
        return False
    return header_equals(applied, next_, revision)


# ---------------------------------------------------------------- fold


def check_snapshot_data(data: object, *, seq: int | None) -> Header:
    """Validate the data of a snapshot event and return its header (SNAP-1)."""
    if not isinstance(data, dict) or set(data) != {"header", "reason"}:
        raise MalformedEvent(
            "a request/header event's data must be exactly {header, reason}",
            rule="SNAP-1",
            seq=seq,
        )
    if data.get("reason") not in SNAPSHOT_REASONS:
        raise MalformedEvent(
            f"request/header reason must be one of {', '.join(SNAPSHOT_REASONS)}",
            rule="SNAP-1",
            seq=seq,
        )
    header: Header = data["header"]
    return header


def fold_step(
    state: Header | None, event: JsonObject, revision: Revision = LATEST
) -> Header | None:
    """Fold one event into the header in force (FOLD-1..FOLD-3)."""
    kind = event.get("type")
    raw_seq = event.get("seq")
    seq = int(raw_seq) if is_integer(raw_seq) else None
    try:
        if kind == SNAPSHOT:
            header = check_snapshot_data(event.get("data"), seq=seq)
            return canonical_header(header, revision)
        if kind == DELTA:
            if state is None:
                raise DeltaBeforeSnapshot(
                    "request/header-delta comes before any request/header snapshot",
                    rule="FOLD-2",
                    seq=seq,
                )
            return apply_header_delta(state, event.get("data"), revision)  # type: ignore[arg-type]
    except (MalformedHeader, MalformedDelta, DeltaConflict, NotJsonValue) as error:
        if error.seq is None and seq is not None:
            raise type(error)(error.detail, rule=error.rule, seq=seq) from None
        raise
    return state


def fold_request_header(
    events: Iterable[JsonObject],
    from_: Header | None = None,
    revision: Revision = LATEST,
) -> Header | None:
    """Fold header events into the header in force; None if there is none (FOLD-1).

    Starts from `from_` (a folded state) when given, so folding a log in
    two parts equals folding it at once. Other event types are skipped.
    """
    state = canonical_header(from_, revision) if from_ is not None else None
    for event in events:
        state = fold_step(state, event, revision)
    return state
