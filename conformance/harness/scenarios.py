"""Scenarios: data files that script a harness run and say what to expect.

A scenario (``conformance/scenarios/*.json``, schema
``scenario.schema.json`` beside them, docs/scenarios.md) names the
revisions it applies to and the rules it shows, the instance set-up
(config, system prompt, tools, declarative contributors), the replies the
fake provider gives, the steps the suite takes (start an instance, send a
prompt, cancel inside a composition, update the header, inject, compact,
dispose) and the expectations the checks compare the evidence with.

This module only loads and checks the files (against the schema, then
what a schema cannot say: the id is the file name, ids are unique, one
reaction per contributor call): it knows nothing of adapters or providers.
Loading never raises on a bad file except `ScenarioError`, whose message
names the file and what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from reqfold.conformance.adapters.messages import registry
from reqfold.conformance.loaded_files import FileBytes, LoadedFiles, file_bytes
from reqfold.conformance.schema_check import Validator, error_text, first_problem
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

SCENARIOS_DIR: Final = Path(__file__).resolve().parent.parent / "scenarios"
"""Where the scenario files live."""

SCHEMA_PATH: Final = SCENARIOS_DIR / "scenario.schema.json"

ACTIONS: Final = (
    "start",
    "send",
    "cancel",
    "dispose",
    "inject",
    "update",
    "compact",
    "release",
)
"""What a step (or a reaction inside a send) can do; exactly one per step."""

REACTIONS: Final = (
    "cancel",
    "dispose",
    "inject",
    "update",
    "compact",
    "release",
    "open",
)
"""What the suite may do inside a send, when a contributor's call starts or
a request is held at a gate (``open`` opens a fake provider's gate)."""


class ScenarioError(ValueError):
    """A scenario file that cannot be used (the message names the file)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reaction:
    """Actions the suite takes during a send, when a contributor's call starts
    or, with `held`, once a request is held at that fake provider gate (a
    reply scripted with ``hold``): a cancel lands mid-request, no sleep."""

    contributor: str
    call: int
    then: tuple[JsonObject, ...]
    held: str = ""
    """The gate a request must be held at (then `contributor` is empty)."""
    tool: str = ""
    """The tool whose call `call` must start (``tool/started``: a blocking
    tool call), instead of a contributor's."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One step: an action with its argument, and for sends what to expect."""

    action: str
    argument: Any
    during: tuple[Reaction, ...] = ()
    expect: JsonObject = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """One scenario file, loaded."""

    id: str
    title: str
    revisions: tuple[Revision, ...]
    rules: tuple[str, ...]
    setup: JsonObject
    replies: tuple[JsonObject, ...]
    steps: tuple[Step, ...]
    expect: tuple[JsonObject, ...]
    path: Path
    seed: Path | None = None
    """A session file the scenario's session starts from (``seeds/``)."""

    def rules_checked(self) -> set[str]:
        """The rule IDs the scenario's own expectations cite."""
        named: set[str] = set()
        for item in self.expect:
            named.update(item.get("rules", ()))
        for step in self.steps:
            named.update(step.expect.get("rules", ()))
        return named

    def rules_named(self) -> set[str]:
        """Every rule ID the file names: its own and its expectations'."""
        named = set(self.rules)
        for item in self.expect:
            named.update(item.get("rules", ()))
        for step in self.steps:
            named.update(step.expect.get("rules", ()))
        return named


def scenario_files(directory: Path = SCENARIOS_DIR) -> list[Path]:
    """The scenario files, sorted by name (the schema is not one)."""
    return sorted(
        path for path in directory.glob("*.json") if path.name != SCHEMA_PATH.name
    )


_LOADED: LoadedFiles[Scenario] = LoadedFiles()
"""The scenarios last loaded from each directory, with the files' bytes."""


def load_scenarios(directory: Path = SCENARIOS_DIR) -> list[Scenario]:
    """Every scenario in `directory`, in file-name order; ids must be unique.

    While every file holds the bytes it held when last loaded (and every
    seed is the same file), the scenarios loaded then are returned again
    without checking the files against the schema anew (a process asks
    more than once: the pytest plugin's options, its plan, a run's report).
    They are shared between callers: read them, never change them.
    """

    def files() -> FileBytes:
        return file_bytes(scenario_files(directory)) + tuple(
            # the seeds they name: still files, at the same place
            (path, _seed_key(path))
            for path in sorted((directory / "seeds").glob("*"))
        )

    return _LOADED.get(directory, files, lambda: _load_scenarios(directory))


def _seed_key(path: Path) -> bytes:
    """What a scenario keeps of a seed (`Scenario.seed`: its resolved path,
    which must be a file), so a seed swapped for a directory or a symlink
    turned elsewhere loads the scenarios anew (a symlink loop raises
    RuntimeError: no cache then)."""
    return f"{path.resolve()}\0{path.is_file()}".encode(errors="surrogateescape")


def _load_scenarios(directory: Path) -> list[Scenario]:
    scenarios = [load_scenario(path) for path in scenario_files(directory)]
    seen: dict[str, Path] = {}
    for scenario in scenarios:
        if scenario.id in seen:
            raise ScenarioError(
                f"{scenario.path.name}: id {scenario.id!r} is also used by"
                f" {seen[scenario.id].name}"
            )
        seen[scenario.id] = scenario.path
    return scenarios


def iter_runs(
    scenarios: list[Scenario], revisions: list[Revision]
) -> Iterator[tuple[Scenario, Revision]]:
    """Each scenario under each of `revisions` it applies to, in order."""
    for scenario in scenarios:
        for revision in scenario.revisions:
            if revision in revisions:
                yield scenario, revision


def load_scenario(path: Path) -> Scenario:
    """Load and check one scenario file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ScenarioError(f"{path.name}: cannot read: {error}") from None
    try:
        return _scenario(raw, path)
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, ScenarioError):
            raise
        raise ScenarioError(f"{path.name}: {error}") from None


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return Validator(schema, registry=registry())


def _schema_problem(raw: Any) -> str | None:
    """The first way `raw` breaks scenario.schema.json, with where, or None."""
    found = first_problem(_validator(), raw)
    if found is None:
        return None
    error = found[0]
    where = "".join(f"[{part!r}]" for part in error.path) or "the file"
    return f"at {where}: {error_text(error, 300)}"


def _scenario(raw: Any, path: Path) -> Scenario:
    if not isinstance(raw, dict):
        raise ScenarioError(f"{path.name}: a scenario is a JSON object")
    problem = _schema_problem(raw)
    if problem is not None and (
        not isinstance(raw.get("id"), str) or raw["id"] == path.stem
    ):
        raise ScenarioError(f"{path.name}: breaks scenario.schema.json {problem}")
    if raw["id"] != path.stem:
        raise ScenarioError(f"{path.name}: id {raw['id']!r} must be the file name")
    steps = tuple(_step(item, path) for item in raw["steps"])
    if not steps or steps[0].action != "start":
        raise ScenarioError(f"{path.name}: the first step must start an instance")
    expect = tuple(raw.get("expect", ()))
    # scenario.schema.json allows only the kinds of the expectation table
    # (tests/conformance/test_expectation_kinds.py keeps the two the same)
    return Scenario(
        id=raw["id"],
        title=raw["title"],
        revisions=tuple(Revision(name) for name in raw["revisions"]),
        rules=tuple(raw["rules"]),
        setup=dict(raw.get("setup", {})),
        replies=tuple(raw.get("replies", ())),
        steps=steps,
        expect=expect,
        path=path,
        seed=_seed(raw.get("seed"), path),
    )


def _seed(name: Any, path: Path) -> Path | None:
    """The seed file a scenario names, which must exist beside it in seeds/."""
    if name is None:
        return None
    seed: Path = (path.parent / str(name)).resolve()
    if seed.parent != (path.parent / "seeds").resolve() or not seed.is_file():
        raise ScenarioError(f"{path.name}: no seed file {name!r} in seeds/")
    return seed


def _step(raw: Mapping[str, Any], path: Path) -> Step:
    actions = [name for name in ACTIONS if name in raw]
    if len(actions) != 1:
        raise ScenarioError(
            f"{path.name}: a step has exactly one of {', '.join(ACTIONS)}: {raw!r}"
        )
    action = actions[0]
    during = tuple(
        Reaction(
            contributor=item["when"].get("contributor", ""),
            call=int(item["when"].get("call", 1)),
            then=tuple(item["then"]),
            held=item["when"].get("held", ""),
            tool=item["when"].get("tool", ""),
        )
        for item in raw.get("during", ())
    )
    if during and action != "send":
        raise ScenarioError(f"{path.name}: only a send has 'during': {raw!r}")
    seen: set[tuple[str, int, str]] = set()
    for reaction in during:
        owner = reaction.contributor or reaction.tool
        key = (owner, reaction.call, reaction.held)
        if key in seen:
            what = (
                f"a request held at {reaction.held!r}"
                if reaction.held
                else f"call {reaction.call} of {owner!r}"
            )
            raise ScenarioError(f"{path.name}: two reactions to {what}")
        seen.add(key)
        for item in reaction.then:
            if len(item) != 1 or next(iter(item)) not in REACTIONS:
                raise ScenarioError(
                    f"{path.name}: a reaction does one of {', '.join(REACTIONS)}:"
                    f" {item!r}"
                )
    return Step(
        action=action,
        argument=raw[action],
        during=during,
        expect=dict(raw.get("expect", {})),
    )
