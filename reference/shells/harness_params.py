"""The harness adapter's per-instance state, and the checks of request params.

`reqfold.reference.shells.harness_adapter.HarnessServer` keeps one `Session` per opened
session file and one `Instance` per started loop, with the declarative
`Contributor`s and the `ToolScript` of ``instance/start``. The
``*_param`` functions read one param of a request and check its shape,
raising `RpcError` (``INVALID_PARAMS``) before anything changes; the
constants say which seams, behaviours and dialects a request may name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop.agent import AgentLoop
from reqfold.reference.loop.client import ChatCompletionsClient
from reqfold.reference.loop.clock import Clock
from reqfold.reference.loop.contexts import ToolContext
from reqfold.reference.loop.tools import Tool
from reqfold.reference.revisions import Revision
from reqfold.reference.shells.adapter import INVALID_PARAMS, RpcError

STATE_ERROR = -32002
"""The harness's state does not allow the request (a send while a turn runs...)."""

DIALECTS = ("deepseek",)
"""Provider dialects `ChatCompletionsClient` speaks (chat completions)."""

SEAM_REVISIONS: dict[str, tuple[Revision, ...]] = {
    "session-prefix": (Revision.SESSION_PREFIX,),
    "request-messages": (Revision.REQUEST_MESSAGES,),
    "step-start": tuple(Revision),
}
"""The revisions in which each contributor seam exists (docs/adapter-protocol.md)."""

SEAM_BEHAVIOURS: dict[str, tuple[str, ...]] = {
    "session-prefix": ("return", "block", "throw", "append"),
    "request-messages": ("return",),
    "step-start": ("append", "none"),
}
"""Each contributor seam and the ``do`` values its calls may have."""


class ContributorError(RuntimeError):
    """A declarative contributor's call failed (``throw``, or aborted while blocked)."""


# ------------------------------------------------------------------ state


@dataclass(eq=False)
class Contributor:
    """A declarative contributor of one instance: its calls and its count."""

    id: str
    seam: str
    calls: list[JsonObject]
    count: int = 0
    """Calls made so far (call n is ``calls[min(n, len(calls)) - 1]``)."""
    release: asyncio.Future[None] | None = None
    """Set while a ``block`` call waits; `HarnessServer.release` resolves it."""
    running: int | None = None
    """The number of the call in progress (between its start and its end)."""
    latched: int | None = None
    """The call in progress was released: a release that came before the
    call blocked makes it return at once when it gets there (the suite
    releases on ``contributor/started``); a second release is refused."""

    def next_call(self) -> tuple[int, JsonObject]:
        """Count a new call; return its number and behaviour."""
        self.count += 1
        return self.count, self.calls[min(self.count, len(self.calls)) - 1]


class ToolScript:
    """The tools of an instance: schemas, and the texts their calls return.

    Call n of a tool (counted per instance, across `load` calls) returns
    ``results[n-1]``, the last one once they run out, ``""`` when none.
    """

    def __init__(self, started: Callable[[str, int], None] | None = None) -> None:
        self.results: dict[str, list[str | JsonObject]] = {}
        self.calls: dict[str, int] = {}
        self.started = started
        """Told ``(tool, call)`` before a call blocks (``tool/started``)."""

    def load(self, specs: Sequence[JsonObject]) -> list[Tool]:
        """Replace the scripted results; return the `Tool` objects for the loop."""
        self.results = {spec["name"]: list(spec["results"]) for spec in specs}
        return [
            Tool(
                name=spec["name"],
                description=spec["description"],
                parameters=spec["parameters"],
                execute=self._execute,
            )
            for spec in specs
        ]

    async def _execute(self, arguments: Any, context: ToolContext) -> str:
        count, result = self.call(context.name)
        if isinstance(result, str):
            return result
        if self.started is not None:  # {"do": "block"}: until the turn's abort
            self.started(context.name, count)
        await context.signal.wait()
        raise ToolBlocked(f"tool {context.name!r} was interrupted while blocked")

    def call(self, name: str) -> tuple[int, str | JsonObject]:
        """Call n of `name` (counting this call) and what it does: a text,
        or `BLOCK`."""
        count = self.calls[name] = self.calls.get(name, 0) + 1
        results = self.results.get(name) or [""]
        return count, results[min(count, len(results)) - 1]


class ToolBlocked(Exception):
    """A blocking tool call the turn's cancel or dispose interrupted."""


@dataclass(eq=False)
class Session:
    """An opened session: its log file, revision and shared clock."""

    name: str
    log: str
    revision: Revision
    clock: Clock
    """One deterministic clock for every instance: times keep increasing."""
    instance: Instance | None = None
    """The latest instance started over the session."""


@dataclass(eq=False)
class Instance:
    """A loop instance and what the adapter keeps beside it."""

    name: str
    session: Session
    loop: AgentLoop
    client: ChatCompletionsClient
    tools: ToolScript
    contributors: dict[str, Contributor] = field(default_factory=dict)
    config: JsonObject | None = None
    """The config set by ``instance/update``; None keeps the loop's own."""
    compact: bool = False
    """Armed by ``instance/compact``: compact once, at the next pre-step."""
    turn: asyncio.Task[None] | None = None
    """The running turn (from ``instance/send`` until ``turn/ended``)."""


# ------------------------------------------------------------------ params


def _get(
    params: JsonObject, name: str, kind: type | tuple[type, ...], what: str
) -> Any:
    if name not in params:
        raise RpcError(INVALID_PARAMS, f"missing param {name!r}")
    value = params[name]
    if not isinstance(value, kind):
        raise RpcError(INVALID_PARAMS, f"param {name!r} must be {what}")
    return value


def string_param(params: JsonObject, name: str) -> str:
    """The string param `name`."""
    value: str = _get(params, name, str, "a string")
    return value


def object_param(params: JsonObject, name: str) -> JsonObject:
    """The object param `name`."""
    value: JsonObject = _get(params, name, dict, "an object")
    return value


def _array(params: JsonObject, name: str) -> list[Any]:
    value: list[Any] = _get(params, name, list, "an array")
    return value


def _strings(params: JsonObject, name: str) -> list[str]:
    value = _array(params, name)
    if not all(isinstance(item, str) for item in value):
        raise RpcError(INVALID_PARAMS, f"param {name!r} must be an array of strings")
    return value


BLOCK: JsonObject = {"do": "block"}
"""A tool result that blocks the call until the turn is cancelled or disposed."""


def _results(spec: JsonObject) -> list[str | JsonObject]:
    """A tool's ``results``: texts, or ``{"do": "block"}`` for a call that
    blocks until its turn is cancelled or disposed."""
    value = _array(spec, "results")
    if not all(isinstance(item, str) or item == BLOCK for item in value):
        raise RpcError(
            INVALID_PARAMS,
            'param \'results\' must be an array of strings or {"do": "block"}',
        )
    return value


def _messages(params: JsonObject, name: str) -> list[JsonObject]:
    value = _array(params, name)
    if not all(isinstance(item, dict) for item in value):
        raise RpcError(INVALID_PARAMS, f"param {name!r} must be an array of messages")
    return value


def revision_param(params: JsonObject) -> Revision:
    """The ``revision`` param, one of the spec's revisions."""
    name = string_param(params, "revision")
    try:
        return Revision(name)
    except ValueError:
        raise RpcError(INVALID_PARAMS, f"unknown revision {name!r}") from None


def tool_specs_param(params: JsonObject) -> list[JsonObject]:
    """The ``tools`` param: ``[{name, description, parameters, results?}]``."""
    specs = []
    names: set[str] = set()
    for spec in _array(params, "tools"):
        if not isinstance(spec, dict):
            raise RpcError(INVALID_PARAMS, "each tool must be an object")
        name = string_param(spec, "name")
        if name in names:
            raise RpcError(INVALID_PARAMS, f"tool {name!r} is listed twice")
        names.add(name)
        specs.append(
            {
                "name": name,
                "description": string_param(spec, "description"),
                "parameters": object_param(spec, "parameters"),
                "results": _results(spec) if "results" in spec else [],
            }
        )
    return specs


def tool_order_param(params: JsonObject) -> list[str] | None:
    """The ``toolOrder`` param: absent or null means sorted by name."""
    if params.get("toolOrder") is None:
        return None
    return _strings(params, "toolOrder")


def _behaviour(seam: str, owner: str, call: Any) -> JsonObject:
    """One entry of a contributor's ``calls``, checked for its seam."""
    if not isinstance(call, dict):
        raise RpcError(INVALID_PARAMS, f"contributor {owner!r}: a call is an object")
    do = string_param(call, "do")
    if do not in SEAM_BEHAVIOURS[seam]:
        raise RpcError(
            INVALID_PARAMS, f"contributor {owner!r}: unknown {seam} call {do!r}"
        )
    if seam == "session-prefix" and do in ("return", "block", "append"):
        _messages(call, "messages")
    if do == "append":
        string_param(call, "text")
    if do == "throw":
        string_param(call, "message")
    if do == "block":
        on_abort = call.get("onAbort", "throw")
        if on_abort not in ("throw", "sentinel"):
            raise RpcError(INVALID_PARAMS, f"unknown onAbort {on_abort!r}")
        if on_abort == "sentinel":
            _messages(call, "sentinel")
    if seam == "request-messages":
        for side in ("before", "after"):
            if side in call:
                _messages(call, side)
    return call


def contributors_param(params: JsonObject) -> list[Contributor]:
    """The ``contributors`` param, in registration order."""
    contributors: list[Contributor] = []
    for spec in _array(params, "contributors"):
        if not isinstance(spec, dict):
            raise RpcError(INVALID_PARAMS, "each contributor must be an object")
        ident, seam = string_param(spec, "id"), string_param(spec, "seam")
        if seam not in SEAM_BEHAVIOURS:
            raise RpcError(INVALID_PARAMS, f"unknown contributor seam {seam!r}")
        if any(other.id == ident for other in contributors):
            raise RpcError(INVALID_PARAMS, f"contributor {ident!r} is listed twice")
        calls = [_behaviour(seam, ident, call) for call in _array(spec, "calls")]
        if not calls:
            raise RpcError(INVALID_PARAMS, f"contributor {ident!r} has no calls")
        contributors.append(Contributor(id=ident, seam=seam, calls=calls))
    return contributors
