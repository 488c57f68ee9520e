"""Reading the vector files: listing them, checking their layout, yielding cases.

`vector_files` lists the files in revision then family order, `load_file`
reads one and checks it against the format of docs/vectors.md (a
`VectorError` names the file, the case and what is wrong), `load_cases`
reads them all and refuses a case id or an input given twice, and
`iter_cases` yields the ``(revision, case)`` pairs to run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Final

from reqfold.conformance.codec.cases import (
    ERROR_KINDS,
    FAMILIES,
    LEVELS,
    PROFILES,
    SCHEMA_PATH,
    SCHEMA_REF,
    VECTORS_DIR,
    VectorCase,
    VectorError,
)
from reqfold.conformance.json_text.values import encode_json, load_json
from reqfold.conformance.loaded_files import LoadedFiles, file_bytes
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision


def vector_files(root: Path = VECTORS_DIR) -> list[Path]:
    """Every vector file under `root`, ordered by revision then family."""
    order = {revision.value: index for index, revision in enumerate(Revision)}
    files = [
        path
        for path in root.glob("*/*.json")
        if path.parent.name in order and path.stem in FAMILIES
    ]
    return sorted(
        files, key=lambda p: (order[p.parent.name], list(FAMILIES).index(p.stem))
    )


def stray_files(root: Path = VECTORS_DIR) -> list[Path]:
    """Files under `root` that are neither the schema nor a vector file."""
    known = {SCHEMA_PATH.resolve(), *(p.resolve() for p in vector_files(root))}
    return sorted(
        path
        for path in root.rglob("*")
        if path.is_file() and path.resolve() not in known
    )


def load_file(path: Path) -> list[VectorCase]:
    """Load one vector file and check its layout; raises `VectorError`."""
    try:
        document = load_json(path.read_text(encoding="utf-8"))
    except ValueError as error:
        raise VectorError(path, f"not valid JSON: {error}") from None
    if not isinstance(document, dict):
        raise VectorError(path, "a vector file is a JSON object")
    unknown = set(document) - {"$schema", "family", "method", "cases"}
    if unknown:
        raise VectorError(path, f"unknown members {sorted(unknown)}")
    if document.get("$schema") != SCHEMA_REF:
        raise VectorError(path, f"$schema must be {SCHEMA_REF!r}")
    family = document.get("family")
    if family != path.stem or family not in FAMILIES:
        raise VectorError(path, f"family {family!r} does not match the file name")
    method = FAMILIES[family]
    if document.get("method") != method:
        raise VectorError(path, f"method must be {method!r} for family {family!r}")
    try:
        directory = Revision(path.parent.name)
    except ValueError:
        raise VectorError(path, "a vector file lives in a revision directory") from None
    cases = document.get("cases")
    if not isinstance(cases, list) or not cases:
        raise VectorError(path, "cases must be a non-empty array")
    return [_load_case(path, family, method, directory, raw) for raw in cases]


def _load_case(
    path: Path, family: str, method: str, directory: Revision, raw: object
) -> VectorCase:
    if not isinstance(raw, dict):
        raise VectorError(path, "a case is a JSON object")
    case_id = raw.get("id")
    if not isinstance(case_id, str) or not case_id.startswith(family + "-"):
        raise VectorError(path, f"case id {case_id!r} must start with {family}-")

    def fail(message: str) -> VectorError:
        return VectorError(path, message, case_id=case_id)

    required = {
        "id",
        "rules",
        "level",
        "profile",
        "revisions",
        "description",
        "params",
        "expect",
    }
    if set(raw) != required:
        raise fail(f"a case has exactly the members {sorted(required)}")
    rules = raw["rules"]
    if not (
        isinstance(rules, list) and rules and all(isinstance(r, str) for r in rules)
    ):
        raise fail("rules must be a non-empty array of rule IDs")
    if raw["level"] not in LEVELS:
        raise fail(f"level must be one of {LEVELS}")
    if raw["profile"] not in PROFILES:
        raise fail(f"profile must be one of {PROFILES}")
    names = raw["revisions"]
    if not (
        isinstance(names, list) and names and all(isinstance(n, str) for n in names)
    ):
        raise fail("revisions must be a non-empty array of revision names")
    try:
        revisions = tuple(Revision(name) for name in names)
    except ValueError as bad_name:
        raise fail(str(bad_name)) from None
    if list(revisions) != sorted(set(revisions), key=list(Revision).index):
        raise fail("revisions must be distinct and in revision order")
    if revisions[0] is not directory:
        raise fail(
            f"the case first applies to {revisions[0].value}, so it belongs in"
            f" {revisions[0].value}/, not {directory.value}/"
        )
    description = raw["description"]
    if not isinstance(description, str) or not description or "\n" in description:
        raise fail("description must be one non-empty line")
    params = raw["params"]
    if not isinstance(params, dict) or "revision" in params:
        raise fail("params must be an object without revision (the runner adds it)")
    expect = raw["expect"]
    if not (isinstance(expect, dict) and len(expect) == 1):
        raise fail('expect must be {"result": ...} or {"error": ...}')
    if "error" in expect:
        _check_rejection(expect["error"], tuple(rules), params, fail)
    elif not isinstance(expect.get("result"), dict):
        raise fail("expect.result must be the method's result object")
    return VectorCase(
        id=case_id,
        family=family,
        method=method,
        rules=tuple(rules),
        level=raw["level"],
        profile=raw["profile"],
        revisions=revisions,
        description=description,
        params=params,
        expect=expect,
        path=path,
    )


_RULE_ID: Final = re.compile(r"[A-Z][A-Z0-9]*(-[A-Z0-9]+)*-[0-9]+")


def _check_rejection(
    rejection: object,
    rules: tuple[str, ...],
    params: JsonObject,
    fail: Callable[[str], VectorError],
) -> None:
    """``expect.error``: a known kind, the rule (or rules) the error must name,
    each one of the case's rules, and a seq that is one of its events'."""
    if not (isinstance(rejection, dict) and rejection.get("kind") in ERROR_KINDS):
        raise fail(f"expect.error.kind must be one of {ERROR_KINDS}")
    unknown = set(rejection) - {"kind", "rule", "seq"}
    if unknown:
        raise fail(f"expect.error has unknown members {sorted(unknown)}")
    rule = rejection.get("rule")
    named = [rule] if isinstance(rule, str) else rule
    if not (
        isinstance(named, list)
        and (len(named) == 1 if isinstance(rule, str) else len(named) >= 2)
        and len(set(named)) == len(named)
        and all(isinstance(r, str) and _RULE_ID.fullmatch(r) for r in named)
    ):
        raise fail(
            "expect.error.rule must be a rule ID, or an array of two or more"
            " distinct rule IDs when the input breaks several"
        )
    if not set(named) <= set(rules):
        raise fail("every rule in expect.error.rule must be one of the case's rules")
    if "seq" in rejection:
        seq = rejection["seq"]
        events = params.get("events")
        seqs = (
            [e.get("seq") for e in events if isinstance(e, dict)]
            if isinstance(events, list)
            else []
        )
        if isinstance(seq, bool) or not isinstance(seq, int) or seq not in seqs:
            raise fail("expect.error.seq must be the seq of one of the params' events")


_LOADED: LoadedFiles[VectorCase] = LoadedFiles()
"""The cases last loaded from each root, with the files' bytes they came from."""


def load_cases(root: Path = VECTORS_DIR) -> list[VectorCase]:
    """Every case of every vector file; raises `VectorError` on a repeated id.

    Two cases that send the same method the same params (member order
    included) under a common revision are one case written twice: refused
    too, since the second shows nothing the first does not.

    A process asks for the cases more than once (the pytest plugin plans,
    then collects; a run plans, then reports): while every file holds the
    bytes it held last time, the cases loaded then are returned again,
    without parsing and checking the files anew (reading them costs a
    hundredth of that). The cases are shared between callers: read them,
    never change them (`VectorCase.request_params` gives a copy to send).
    """
    return _LOADED.get(
        root, lambda: file_bytes(vector_files(root)), lambda: _load_cases(root)
    )


def _load_cases(root: Path) -> list[VectorCase]:
    seen: dict[str, Path] = {}
    inputs: dict[tuple[str, str], list[VectorCase]] = {}
    cases: list[VectorCase] = []
    for path in vector_files(root):
        for case in load_file(path):
            if case.id in seen:
                raise VectorError(
                    path, f"id also used in {seen[case.id]}", case_id=case.id
                )
            seen[case.id] = path
            same = inputs.setdefault((case.method, encode_json(case.params)), [])
            for other in same:
                if set(other.revisions) & set(case.revisions):
                    raise VectorError(
                        path,
                        f"same method and params as {other.id}"
                        f" ({other.path.parent.name}/{other.path.name})"
                        " under a common revision",
                        case_id=case.id,
                    )
            same.append(case)
            cases.append(case)
    return cases


def iter_cases(
    root: Path = VECTORS_DIR, *, revisions: Iterable[Revision] | None = None
) -> Iterator[tuple[Revision, VectorCase]]:
    """Yield ``(revision, case)`` for every revision each case applies to.

    With `revisions`, only those (an implementation runs the one it
    declares).
    """
    wanted = set(Revision if revisions is None else revisions)
    for case in load_cases(root):
        for revision in case.revisions:
            if revision in wanted:
                yield revision, case
