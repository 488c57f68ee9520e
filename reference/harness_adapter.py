"""The reference harness behind the adapter protocol (docs/adapter-protocol.md).

``python -m reference.harness_adapter`` serves both parts of the protocol
over newline-delimited JSON-RPC 2.0 on stdin/stdout: the codec methods
(part 1, delegated to `reference.adapter.dispatch`) and the harness methods
(part 2), with which the suite drives `reference.loop.AgentLoop` instances
against the fake provider.

Two layers:

- `HarnessServer`, the protocol as plain async calls: ``await
  handle(method, params)`` returns a result or raises
  `reference.adapter.RpcError`; notifications go to the ``notify``
  callback. No handler waits for a turn: ``instance/send`` starts one in
  an asyncio task and answers at once; the turn's end is the
  ``turn/ended`` notification. The declarative contributors and tools of
  ``instance/start`` are mapped onto the loop's seams by one small method
  each (`HarnessServer.attach_session_prefix`, `prefix_call`...), so a
  known-bad variant is a subclass overriding one of them, or a different
  ``loop_class``.
- `main`, the stdio shell: a reader thread feeds stdin lines to the event
  loop, which handles requests strictly in arrival order and writes every
  response and notification as one flushed line. The framing and errors
  are `reference.adapter`'s (parse errors, invalid requests, ids that
  cannot be echoed, the line limit, internal errors).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import threading
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from reference import adapter
from reference.adapter import (
    INVALID_PARAMS,
    LineTooLong,
    RpcError,
    answer,
    as_rpc_error,
    parse_request,
    read_line,
)
from reference.errors import CodecError, NotJsonValue, PersistenceError
from reference.json_values import JsonObject, canonical_json, check_json_value
from reference.loop.agent import (
    AgentLoop,
    ConfigValue,
    Framing,
    PrefixContext,
    PrefixValue,
    PreStepContext,
    RequestContext,
    RequestMessagesContext,
)
from reference.loop.clock import DEMO_EPOCH_MS, Clock, counter_clock
from reference.loop.compaction import Compactor
from reference.loop.errors import AgentError
from reference.loop.freeze import FrozenObject, thaw
from reference.loop.persistence import create_session_file, open_session_file
from reference.loop.provider import ChatCompletionsClient
from reference.loop.tools import Tool, ToolContext
from reference.loop.waterfall import Next
from reference.revisions import Revision

STATE_ERROR = -32002
"""The harness's state does not allow the request (a send while a turn runs...)."""

CAPABILITIES = ["codec", "harness"]
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

SETTLE_SECONDS = 5.0
"""How long a disposed instance's turn may take to end before it is cancelled."""

Notify = Callable[[str, JsonObject], None]
Log = Callable[[str], None]


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

    def __init__(self) -> None:
        self.results: dict[str, list[str]] = {}
        self.calls: dict[str, int] = {}

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
        return self.call(context.name)

    def call(self, name: str) -> str:
        """The text call n of `name` returns (counting this call)."""
        count = self.calls[name] = self.calls.get(name, 0) + 1
        results = self.results.get(name) or [""]
        return results[min(count, len(results)) - 1]


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


def _string(params: JsonObject, name: str) -> str:
    value: str = _get(params, name, str, "a string")
    return value


def _object(params: JsonObject, name: str) -> JsonObject:
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


def _messages(params: JsonObject, name: str) -> list[JsonObject]:
    value = _array(params, name)
    if not all(isinstance(item, dict) for item in value):
        raise RpcError(INVALID_PARAMS, f"param {name!r} must be an array of messages")
    return value


def _revision(params: JsonObject) -> Revision:
    name = _string(params, "revision")
    try:
        return Revision(name)
    except ValueError:
        raise RpcError(INVALID_PARAMS, f"unknown revision {name!r}") from None


def _tool_specs(params: JsonObject) -> list[JsonObject]:
    """The ``tools`` param: ``[{name, description, parameters, results?}]``."""
    specs = []
    names: set[str] = set()
    for spec in _array(params, "tools"):
        if not isinstance(spec, dict):
            raise RpcError(INVALID_PARAMS, "each tool must be an object")
        name = _string(spec, "name")
        if name in names:
            raise RpcError(INVALID_PARAMS, f"tool {name!r} is listed twice")
        names.add(name)
        specs.append(
            {
                "name": name,
                "description": _string(spec, "description"),
                "parameters": _object(spec, "parameters"),
                "results": _strings(spec, "results") if "results" in spec else [],
            }
        )
    return specs


def _tool_order(params: JsonObject) -> list[str] | None:
    """The ``toolOrder`` param: absent or null means sorted by name."""
    if params.get("toolOrder") is None:
        return None
    return _strings(params, "toolOrder")


def _behaviour(seam: str, owner: str, call: Any) -> JsonObject:
    """One entry of a contributor's ``calls``, checked for its seam."""
    if not isinstance(call, dict):
        raise RpcError(INVALID_PARAMS, f"contributor {owner!r}: a call is an object")
    do = _string(call, "do")
    if do not in SEAM_BEHAVIOURS[seam]:
        raise RpcError(
            INVALID_PARAMS, f"contributor {owner!r}: unknown {seam} call {do!r}"
        )
    if seam == "session-prefix" and do in ("return", "block", "append"):
        _messages(call, "messages")
    if do == "append":
        _string(call, "text")
    if do == "throw":
        _string(call, "message")
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


def _contributors(params: JsonObject) -> list[Contributor]:
    """The ``contributors`` param, in registration order."""
    contributors: list[Contributor] = []
    for spec in _array(params, "contributors"):
        if not isinstance(spec, dict):
            raise RpcError(INVALID_PARAMS, "each contributor must be an object")
        ident, seam = _string(spec, "id"), _string(spec, "seam")
        if seam not in SEAM_BEHAVIOURS:
            raise RpcError(INVALID_PARAMS, f"unknown contributor seam {seam!r}")
        if any(other.id == ident for other in contributors):
            raise RpcError(INVALID_PARAMS, f"contributor {ident!r} is listed twice")
        calls = [_behaviour(seam, ident, call) for call in _array(spec, "calls")]
        if not calls:
            raise RpcError(INVALID_PARAMS, f"contributor {ident!r} has no calls")
        contributors.append(Contributor(id=ident, seam=seam, calls=calls))
    return contributors


# ------------------------------------------------------------------ server


class HarnessServer:
    """The harness methods of the adapter protocol, over `AgentLoop` instances.

    Args:
        notify: called with ``(method, params)`` for each notification
            (``contributor/started``, ``turn/ended``); must not raise.
        loop_class: the loop each ``instance/start`` builds (a known-bad
            variant is a subclass).
        log: where diagnostics go (the stdio shell passes stderr).
    """

    def __init__(
        self,
        notify: Notify,
        *,
        loop_class: type[AgentLoop] = AgentLoop,
        log: Log | None = None,
    ) -> None:
        self.notify = notify
        self.loop_class = loop_class
        self._log = log
        self.sessions: dict[str, Session] = {}
        self.instances: dict[str, Instance] = {}
        """The instances that may still be addressed (a retired one is gone)."""
        self.started: set[str] = set()
        """Every instance name ever started: names are never reused."""
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self.methods: dict[str, Callable[[JsonObject], Awaitable[Any]]] = {
            "session/open": self.open_session,
            "instance/start": self.start_instance,
            "instance/send": self.send,
            "instance/cancel": self.cancel,
            "instance/dispose": self.dispose,
            "instance/inject": self.inject,
            "instance/update": self.update,
            "instance/compact": self.compact,
            "contributor/release": self.release,
        }

    async def handle(self, method: str, params: JsonObject) -> Any:
        """Answer one request: its result, or `RpcError`."""
        if method == "initialize":
            result = adapter.dispatch(method, params)
            return {**result, "name": adapter.NAME, "capabilities": CAPABILITIES}
        if method == "shutdown":
            await self.close()
            return None
        handler = self.methods.get(method)
        if handler is None:
            return adapter.dispatch(method, params)  # codec, or METHOD_NOT_FOUND
        if self._closed:
            raise RpcError(STATE_ERROR, "the adapter is shutting down")
        try:
            check_json_value(params, what="params")
        except NotJsonValue as problem:
            raise RpcError(INVALID_PARAMS, str(problem)) from None
        return await handler(params)

    async def close(self) -> None:
        """Dispose every instance, let running turns end, close the clients."""
        if self._closed:
            return
        self._closed = True
        for instance in self.instances.values():
            instance.loop.dispose()
        await self._settle(set(self._tasks))
        for instance in self.instances.values():
            await instance.client.aclose()

    # ------------------------------------------------------------ lookups

    def _session(self, params: JsonObject) -> Session:
        name = _string(params, "session")
        session = self.sessions.get(name)
        if session is None:
            raise RpcError(INVALID_PARAMS, f"unknown session {name!r}")
        return session

    def _instance(self, params: JsonObject) -> Instance:
        name = _string(params, "instance")
        instance = self.instances.get(name)
        if instance is None and name in self.started:
            raise RpcError(
                STATE_ERROR, f"instance {name!r} was disposed and replaced by a resume"
            )
        if instance is None:
            raise RpcError(INVALID_PARAMS, f"unknown instance {name!r}")
        return instance

    # ------------------------------------------------------------ methods

    async def open_session(self, params: JsonObject) -> JsonObject:
        """``session/open``: create the empty session file."""
        name, log = _string(params, "session"), _string(params, "log")
        revision = _revision(params)
        if name in self.sessions:
            raise RpcError(STATE_ERROR, f"session {name!r} is already open")
        try:
            create_session_file(
                log, session_id=name, created_at=DEMO_EPOCH_MS, revision=revision
            )
        except (OSError, ValueError) as error:
            raise RpcError(
                INVALID_PARAMS, f"cannot create the session file {log!r}: {error}"
            ) from None
        self.sessions[name] = Session(
            name=name, log=log, revision=revision, clock=counter_clock()
        )
        return {"log": log}

    async def start_instance(self, params: JsonObject) -> JsonObject:
        """``instance/start``: a new loop instance over the session's file."""
        session = self._session(params)
        name = _string(params, "instance")
        revision = _revision(params)
        provider = _object(params, "provider")
        base_url, api_key = _string(provider, "baseUrl"), _string(provider, "apiKey")
        dialect = _string(provider, "dialect")
        config, system = _object(params, "config"), _string(params, "system")
        specs, tool_order = _tool_specs(params), _tool_order(params)
        contributors = _contributors(params)
        if name in self.started:
            raise RpcError(STATE_ERROR, f"instance {name!r} was already started")
        if revision is not session.revision:
            raise RpcError(
                INVALID_PARAMS,
                f"revision {revision.value!r} differs from the session's"
                f" ({session.revision.value!r})",
            )
        if dialect not in DIALECTS:
            raise RpcError(INVALID_PARAMS, f"unsupported provider dialect {dialect!r}")
        for contributor in contributors:
            if revision not in SEAM_REVISIONS[contributor.seam]:
                raise RpcError(
                    INVALID_PARAMS,
                    f"contributor {contributor.id!r}: seam {contributor.seam!r}"
                    f" does not exist in revision {revision.value!r}",
                )
        if session.instance is not None:
            await self._retire(session.instance)
        try:
            log, sink = open_session_file(session.log)
        except (OSError, CodecError, PersistenceError) as error:
            raise RpcError(
                STATE_ERROR, f"cannot reopen the session file: {error}"
            ) from None
        script = ToolScript()
        client = self.make_client(base_url, api_key)
        loop = self.loop_class(
            provider=client,
            config=config,
            system=system,
            tools=script.load(specs),
            tool_order=tool_order,
            revision=revision,
            clock=session.clock,
            session=log,
            sink=sink,
        )
        instance = Instance(
            name=name, session=session, loop=loop, client=client, tools=script
        )
        try:
            self.install_hooks(instance)
            for contributor in contributors:
                instance.contributors[contributor.id] = contributor
                self.attach(instance, contributor)
        except ValueError as error:  # a seam the revision does not have
            loop.dispose()
            await client.aclose()
            raise RpcError(INVALID_PARAMS, str(error)) from None
        self.instances[name] = session.instance = instance
        self.started.add(name)
        return {}

    def make_client(self, base_url: str, api_key: str) -> ChatCompletionsClient:
        """The provider client of a new instance (a variant may send otherwise)."""
        return ChatCompletionsClient(base_url=base_url, api_key=api_key, stream=True)

    async def send(self, params: JsonObject) -> JsonObject:
        """``instance/send``: start a turn; its end is the ``turn/ended`` notification.

        Yields once before answering, so the turn has started (its
        ``turn/start`` is logged) and a cancel or inject sent next lands
        inside it.
        """
        instance = self._instance(params)
        prompt = _string(params, "prompt")
        if instance.turn is not None:
            raise RpcError(STATE_ERROR, f"instance {instance.name!r} is running a turn")
        if instance.loop.disposed:
            raise RpcError(STATE_ERROR, f"instance {instance.name!r} was disposed")
        task = asyncio.create_task(self._run_turn(instance, prompt))
        instance.turn = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await asyncio.sleep(0)  # one loop iteration: the task runs to its first wait
        return {}

    async def cancel(self, params: JsonObject) -> JsonObject:
        """``instance/cancel``: abort the running turn (no effect while idle)."""
        instance = self._instance(params)
        reason = params.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise RpcError(INVALID_PARAMS, "param 'reason' must be a string")
        instance.loop.cancel(reason)
        return {}

    async def dispose(self, params: JsonObject) -> JsonObject:
        """``instance/dispose``: a running turn ends ``disposed``; no more turns."""
        self._instance(params).loop.dispose()
        return {}

    async def inject(self, params: JsonObject) -> JsonObject:
        """``instance/inject``: log a ``context/message`` (a one-shot turn if idle)."""
        instance = self._instance(params)
        text = _string(params, "text")
        try:
            instance.loop.inject(text)
        except AgentError as error:  # disposed, not persisted: the loop said no
            raise RpcError(STATE_ERROR, f"inject failed: {error}") from None
        return {}

    async def update(self, params: JsonObject) -> JsonObject:
        """``instance/update``: what the next request builds from.

        Every param is checked before anything changes. ``toolOrder: null``
        means sorted by name; an absent member is left as it is.
        """
        instance = self._instance(params)
        system = _string(params, "system") if "system" in params else None
        specs = _tool_specs(params) if "tools" in params else None
        order = _tool_order(params)
        config = _object(params, "config") if "config" in params else None
        loop = instance.loop
        if system is not None:
            loop.system = system
        if specs is not None:
            loop.tools = {tool.name: tool for tool in instance.tools.load(specs)}
        if "toolOrder" in params:
            loop.tool_order = order
        if config is not None:
            instance.config = config
        return {}

    async def compact(self, params: JsonObject) -> JsonObject:
        """``instance/compact``: compact once, at the instance's next pre-step."""
        self._instance(params).compact = True
        return {}

    async def release(self, params: JsonObject) -> JsonObject:
        """``contributor/release``: the blocked call returns its ``messages``."""
        instance = self._instance(params)
        ident = _string(params, "contributor")
        contributor = instance.contributors.get(ident)
        if contributor is None:
            raise RpcError(INVALID_PARAMS, f"unknown contributor {ident!r}")
        if contributor.running is None or contributor.latched is not None:
            raise RpcError(STATE_ERROR, f"contributor {ident!r} is not blocked")
        contributor.latched = contributor.running
        if contributor.release is not None and not contributor.release.done():
            contributor.release.set_result(None)
        return {}

    # ------------------------------------------------------------ turns

    async def _run_turn(self, instance: Instance, prompt: str) -> None:
        """Run one turn and report its end; never leaves an exception unobserved."""
        loop = instance.loop
        start = len(loop.session)
        try:
            result = await loop.send(prompt)
        except BaseException as error:
            turn, reason = self._logged_end(loop, start, error)
            if not isinstance(error, asyncio.CancelledError):
                self._report(f"turn of instance {instance.name!r} raised", error)
            instance.turn = None
            self._turn_ended(instance, turn, reason)
            if not isinstance(error, Exception):
                raise  # cancelled (by `close`), or the interpreter is exiting
            return
        instance.turn = None
        self._turn_ended(instance, result.turn, result.reason)

    def _turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        self.notify(
            "turn/ended", {"instance": instance.name, "turn": turn, "reason": reason}
        )

    @staticmethod
    def _logged_end(
        loop: AgentLoop, start: int, error: BaseException
    ) -> tuple[int | None, JsonObject]:
        """The last ``turn/end`` logged since seq `start`, else ``not-started``."""
        for seq in range(len(loop.session) - 1, start - 1, -1):
            event = loop.session[seq]
            if event["type"] == "turn/end":
                return event["data"]["turn"], thaw(event["data"]["reason"])
        message = str(error) or type(error).__name__
        return None, {"kind": "not-started", "message": message}

    async def _retire(self, instance: Instance) -> None:
        """Dispose an instance a new one replaces; its turn ends first.

        It is forgotten: one adapter process serves many sessions, and a
        retired loop (its log in memory, its client) would otherwise stay.
        """
        self.instances.pop(instance.name, None)
        instance.loop.dispose()
        if instance.turn is not None:
            await self._settle({instance.turn})
        await instance.client.aclose()

    async def _settle(self, tasks: set[asyncio.Task[None]]) -> None:
        """Wait for disposed turns to end; cancel those that do not, in time."""
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=SETTLE_SECONDS)
        for task in pending:
            self._report(f"a turn did not end {SETTLE_SECONDS}s after dispose", None)
            task.cancel()
        if pending:
            await asyncio.wait(pending)

    def _report(self, what: str, error: BaseException | None) -> None:
        if self._log is None:
            return
        detail = "" if error is None else "".join(traceback.format_exception(error))
        self._log(f"reference.harness_adapter: {what}\n{detail}")

    # ------------------------------------------------------------ mapping

    def install_hooks(self, instance: Instance) -> None:
        """The adapter's own listeners: the updated config and armed compaction."""
        loop = instance.loop

        async def request_config(
            context: RequestContext, config: ConfigValue, next: Next[ConfigValue]
        ) -> ConfigValue:
            if instance.config is not None:
                return instance.config
            return await next()

        compactor = Compactor(threshold_tokens=0)

        async def compact(context: PreStepContext) -> None:
            if instance.compact:
                instance.compact = False
                await compactor(context)

        loop.hooks.request.register(request_config)
        loop.hooks.pre_step.register(compact)

    def attach(self, instance: Instance, contributor: Contributor) -> None:
        """Register `contributor` on the loop seam its ``seam`` names."""
        if contributor.seam == "session-prefix":
            self.attach_session_prefix(instance, contributor)
        elif contributor.seam == "request-messages":
            self.attach_request_messages(instance, contributor)
        else:
            self.attach_step_start(instance, contributor)

    def begin_call(self, instance: Instance, contributor: Contributor) -> JsonObject:
        """Count a call and report ``contributor/started``; returns its behaviour."""
        number, behaviour = contributor.next_call()
        self.notify(
            "contributor/started",
            {"instance": instance.name, "contributor": contributor.id, "call": number},
        )
        return behaviour

    def attach_session_prefix(
        self, instance: Instance, contributor: Contributor
    ) -> None:
        """A session-prefix waterfall listener, prepending (registration order)."""

        async def listener(
            context: PrefixContext, prefix: PrefixValue, next: Next[PrefixValue]
        ) -> PrefixValue:
            behaviour = self.begin_call(instance, contributor)
            contributor.running = contributor.count
            try:
                mine = await self.prefix_call(instance, contributor, behaviour, context)
            finally:
                contributor.running = contributor.latched = None
            return [*mine, *await next()]

        instance.loop.hooks.session_prefix.register(listener)

    async def prefix_call(
        self,
        instance: Instance,
        contributor: Contributor,
        behaviour: JsonObject,
        context: PrefixContext,
    ) -> PrefixValue:
        """What one session-prefix call contributes (``return``, ``block``...)."""
        do = behaviour["do"]
        if do == "throw":
            raise ContributorError(behaviour["message"])
        if do == "append":
            context.loop.inject(behaviour["text"])
        if do == "block" and not await self.block(contributor, context):
            if behaviour.get("onAbort", "throw") == "sentinel":
                sentinel: PrefixValue = behaviour["sentinel"]
                return sentinel
            raise ContributorError(
                f"contributor {contributor.id!r} was aborted while blocked"
            )
        messages: PrefixValue = behaviour["messages"]
        return messages

    async def block(self, contributor: Contributor, context: PrefixContext) -> bool:
        """Wait for ``contributor/release`` (True) or the turn's abort (False)."""
        if contributor.latched is not None:
            return True
        release: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        aborted = asyncio.ensure_future(context.signal.wait())
        contributor.release = release
        try:
            await asyncio.wait({release, aborted}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            contributor.release = None
            aborted.cancel()
        return release.done()

    def attach_request_messages(
        self, instance: Instance, contributor: Contributor
    ) -> None:
        """A request-messages listener: its framing before the later ones'."""

        async def listener(
            context: RequestMessagesContext, framing: Framing, next: Next[Framing]
        ) -> Framing:
            behaviour = self.begin_call(instance, contributor)
            later = await next()
            return Framing(
                before=[*behaviour.get("before", ()), *later.before],
                after=[*behaviour.get("after", ()), *later.after],
            )

        instance.loop.hooks.request_messages.register(listener)

    def attach_step_start(self, instance: Instance, contributor: Contributor) -> None:
        """A session-event listener reacting to each ``step/start``, synchronously."""

        def listener(event: FrozenObject) -> None:
            if event["type"] != "step/start":
                return
            behaviour = self.begin_call(instance, contributor)
            if behaviour["do"] == "append":
                instance.loop.inject(behaviour["text"])

        instance.loop.on_event(listener)


# ------------------------------------------------------------------ stdio


class _Output:
    """stdout: whole lines, flushed, one writer; remembers when it is gone."""

    def __init__(self, stdout: IO[bytes], on_lost: Callable[[], None]) -> None:
        self._stdout = stdout
        self._on_lost = on_lost
        self.gone: str | None = None

    def write(self, data: bytes) -> None:
        if self.gone is not None:
            return
        try:
            self._stdout.write(data)
            self._stdout.flush()
        except (OSError, ValueError) as error:
            self.gone = str(error) or type(error).__name__
            self._on_lost()

    def notify(self, method: str, params: JsonObject) -> None:
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        try:
            line = (canonical_json(message) + "\n").encode("utf-8")
        except Exception as error:  # a bug: the notification is not JSON
            _stderr(f"reference.harness_adapter: cannot send {method}: {error}\n")
            return
        self.write(line)


def _stderr(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


_LOST = object()
"""Queued when stdout is gone: nobody can be answered any more."""


def _read_lines(
    stdin: IO[bytes], loop: asyncio.AbstractEventLoop, inbox: asyncio.Queue[object]
) -> None:
    """The reader thread: queue each stdin line, then None at end of input."""
    while True:
        item: object
        try:
            item = read_line(stdin)
        except LineTooLong as too_long:
            item = too_long
        except (OSError, ValueError):
            item = None  # stdin cannot be read: as good as its end
        try:
            loop.call_soon_threadsafe(inbox.put_nowait, item)
        except RuntimeError:  # the event loop is closed: nobody is listening
            return
        if item is None:
            return


async def serve(
    stdin: IO[bytes],
    stdout: IO[bytes],
    *,
    loop_class: type[AgentLoop] = AgentLoop,
    server_class: type[HarnessServer] = HarnessServer,
) -> int:
    """Serve requests from `stdin` until ``shutdown`` or end of input.

    Returns the exit status: 0, or 1 when stdout can no longer be written.
    """
    inbox: asyncio.Queue[object] = asyncio.Queue()
    output = _Output(stdout, lambda: inbox.put_nowait(_LOST))
    server = server_class(output.notify, loop_class=loop_class, log=_stderr)
    reader = threading.Thread(
        target=_read_lines,
        args=(stdin, asyncio.get_running_loop(), inbox),
        name="harness-adapter-stdin",
        daemon=True,
    )
    reader.start()
    try:
        while (item := await inbox.get()) is not None and item is not _LOST:
            if isinstance(item, LineTooLong):
                output.write(item.response())
            elif (
                isinstance(item, bytes)
                and item.strip()
                and await _serve_line(server, output, item)
            ):
                break
    finally:
        await server.close()
    if output.gone is not None:
        _stderr(f"reference.harness_adapter: stdout is gone ({output.gone}); exiting\n")
        return 1
    return 0


async def _serve_line(server: HarnessServer, output: _Output, line: bytes) -> bool:
    """Answer one request line; returns whether it was ``shutdown``."""
    request = parse_request(line)
    if isinstance(request, bytes):
        output.write(request)
        return False
    try:
        result = await server.handle(request.method, request.params)
    except Exception as error:  # RpcError, or a bug: say so and keep serving
        reply = answer(request, error=as_rpc_error(error))
    else:
        reply = answer(request, result=result)
    if reply is not None:
        output.write(reply)
    return request.method == "shutdown"


def main(
    argv: Sequence[str] | None = None,
    *,
    loop_class: type[AgentLoop] = AgentLoop,
    server_class: type[HarnessServer] = HarnessServer,
) -> int:
    """Entry point of ``python -m reference.harness_adapter``."""
    parser = argparse.ArgumentParser(
        prog="python -m reference.harness_adapter",
        description="The reference harness over the reqfold adapter protocol"
        " (docs/adapter-protocol.md): JSON-RPC lines on stdin and stdout.",
    )
    parser.parse_args(argv)
    # The reader thread reads a private copy of stdin: a daemon thread still
    # blocked in sys.stdin's buffer at exit would abort interpreter shutdown.
    stdin = os.fdopen(os.dup(sys.stdin.fileno()), "rb")
    status = asyncio.run(
        serve(
            stdin, sys.stdout.buffer, loop_class=loop_class, server_class=server_class
        )
    )
    if status != 0:
        # Nothing more can reach stdout; stop the interpreter from trying to
        # flush it again at exit (which would print "Exception ignored").
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), sys.stdout.fileno())
    return status


if __name__ == "__main__":
    raise SystemExit(main())
