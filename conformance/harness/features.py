"""Optional harness features: what a scenario needs, and what an adapter declares.

Every harness must support the core of the harness protocol (opening a
session, starting and resuming instances, sends, cancels, disposes:
docs/adapter-protocol.md, "Optional features"). Everything else is an
optional **feature** an adapter declares in ``initialize`` (``features``):
a harness that cannot compact on demand, take an injection or change its
header mid-run is not broken, it just cannot be judged on a scenario that
needs one. Such a scenario is **not covered**: listed with the reason in
every output and report, never an error or a failure.

Pure: a scenario's needs are read from its data (its steps, reactions,
seed and contributors' seams), so a new scenario needs no list kept by
hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from reqfold.conformance.harness.scenarios import Scenario
from reqfold.reference.json_values import JsonObject

FEATURES: Final[Mapping[str, str]] = {
    "compact": "on-demand compaction",
    "inject": "inject",
    "update": "header updates",
    "seed": "seeded sessions",
    "step-start-seam": "the step-start seam",
    "session-prefix-seam": "the session-prefix seam",
    "request-messages-seam": "the request-messages seam",
    "blocking-tools": "blocking tools",
}
"""Each optional feature's name in ``initialize``, and what it is in words."""

BEFORE_THE_MEMBER: Final = frozenset(FEATURES) - {"blocking-tools"}
"""What an adapter that lists no ``features`` declares: every feature the
protocol had before the member existed (its adapters served all of them).
A feature added since must be declared."""

ACTION_FEATURES: Final[Mapping[str, str]] = {
    "compact": "compact",
    "inject": "inject",
    "update": "update",
}
"""Scenario actions (steps or reactions) that need a feature."""

METHOD_FEATURES: Final[Mapping[str, str]] = {
    "instance/compact": "compact",
    "instance/inject": "inject",
    "instance/update": "update",
}
"""Harness methods whose every use is optional: refusing one as not
supported means its feature is missing."""

NOT_SUPPORTED: Final = -32003
"""The JSON-RPC error code an adapter answers for a method (or a use of
one, such as a seed or a contributor seam) its harness does not support."""


def declared_features(identity: Mapping[str, Any]) -> frozenset[str]:
    """The optional features an ``initialize`` result declares.

    An adapter that leaves ``features`` out declares `BEFORE_THE_MEMBER`:
    the protocol had no such member before, and its adapters served every
    method it had then.
    """
    listed = identity.get("features")
    if not isinstance(listed, list):
        return BEFORE_THE_MEMBER
    return frozenset(name for name in listed if name in FEATURES)


def features_needed(scenario: Scenario) -> frozenset[str]:
    """Every optional feature playing `scenario` takes, read from its data."""
    needed: set[str] = set()
    if scenario.seed is not None:
        needed.add("seed")
    needed.update(_seams(scenario.setup.get("contributors", ())))
    tool_lists = [scenario.setup.get("tools", ())]
    for step in scenario.steps:
        if step.action in ACTION_FEATURES:
            needed.add(ACTION_FEATURES[step.action])
        if step.action in ("start", "update") and isinstance(step.argument, dict):
            needed.update(_seams(step.argument.get("contributors", ())))
            tool_lists.append(step.argument.get("tools", ()))
        for reaction in step.during:
            for item in reaction.then:
                needed.update(
                    ACTION_FEATURES[action]
                    for action in item
                    if action in ACTION_FEATURES
                )
                if isinstance(item.get("update"), dict):
                    tool_lists.append(item["update"].get("tools", ()))
    if any(_blocks(tools) for tools in tool_lists):
        needed.add("blocking-tools")
    return frozenset(needed)


def _blocks(tools: Iterable[JsonObject]) -> bool:
    """Whether a tool list scripts a call that blocks (``{"do": "block"}``)."""
    return any(
        isinstance(result, dict) and result.get("do") == "block"
        for tool in tools
        for result in tool.get("results", ())
    )


def _seams(contributors: Iterable[JsonObject]) -> set[str]:
    return {f"{contributor['seam']}-seam" for contributor in contributors}


def missing_features(scenario: Scenario, declared: frozenset[str]) -> list[str]:
    """The features `scenario` needs that are not `declared`, in `FEATURES` order."""
    needed = features_needed(scenario)
    return [name for name in FEATURES if name in needed and name not in declared]


def not_declared_reason(missing: Iterable[str]) -> str:
    """Why a scenario is not covered, in a few words: ``no inject declared``,
    ``no on-demand compaction and no session-prefix seam declared`` (a
    feature's article gives way to "no")."""
    words = (FEATURES[name].removeprefix("the ") for name in missing)
    return "no " + " and no ".join(words) + " declared"


def feature_of_request(method: str, params: Mapping[str, Any]) -> str | None:
    """The optional feature a request uses, or None for a core one.

    A refusal as not supported (`NOT_SUPPORTED`) of a core request, or of
    an optional one whose feature the adapter declared, is an error; of an
    undeclared optional one it makes the scenario not covered.
    """
    if method in METHOD_FEATURES:
        return METHOD_FEATURES[method]
    if method == "session/open" and "seed" in params:
        return "seed"
    if method == "instance/start":
        seams = sorted(_seams(params.get("contributors") or ()))
        if seams:
            return seams[0] if len(seams) == 1 else " or ".join(seams)
    return None
