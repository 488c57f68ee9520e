"""The reference harness behind the adapter protocol (docs/adapter-protocol.md).

``python -m reqfold.reference.harness_adapter`` serves the codec methods (part
1, `reqfold.reference.shells.adapter.dispatch`) and the harness methods (part 2)
as JSON-RPC lines on stdin/stdout; with them the suite drives
`reqfold.reference.loop.AgentLoop` instances against the fake provider.

This module holds `HarnessServer`, the protocol as plain async calls
(``await handle(method, params)``; notifications go to ``notify``), and
`main`. No handler waits for a turn: ``instance/send`` starts one in a task
and ``turn/ended`` reports its end. Each contributor seam is mapped onto the
loop by one small method (`HarnessServer.attach_session_prefix`,
`prefix_call`...), so a known-bad variant is a subclass overriding one of
them, or a different ``loop_class``. The per-instance state and the param
checks are `reqfold.reference.shells.harness_params`; the stdio shell is
`reqfold.reference.shells.harness_stdio`.

At about 600 lines the module is longer than the house's usual 500, on
purpose: `HarnessServer` keeps the mapping of every protocol call and
every contributor kind in one class, so a variant (the known-bad gallery
of tests/conformance/bad_harnesses/) reads and overrides it in one place.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import traceback
from collections.abc import Awaitable, Callable, Sequence
from typing import IO, Any

from reqfold.reference.errors import CodecError, NotJsonValue, PersistenceError
from reqfold.reference.json_values import JsonObject, check_json_value
from reqfold.reference.loop.agent import AgentLoop
from reqfold.reference.loop.client import ChatCompletionsClient
from reqfold.reference.loop.clock import DEMO_EPOCH_MS, counter_clock
from reqfold.reference.loop.compaction import Compactor
from reqfold.reference.loop.contexts import (
    ConfigValue,
    Framing,
    PrefixContext,
    PrefixValue,
    PreStepContext,
    RequestContext,
    RequestMessagesContext,
)
from reqfold.reference.loop.errors import AgentError
from reqfold.reference.loop.freeze import FrozenObject, thaw
from reqfold.reference.loop.httpx_import import import_httpcore_without_trio
from reqfold.reference.loop.persistence import open_session_file
from reqfold.reference.loop.waterfall import Next
from reqfold.reference.revisions import Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells import adapter, harness_stdio
from reqfold.reference.shells.adapter import INVALID_PARAMS, RpcError
from reqfold.reference.shells.harness_params import (
    DIALECTS,
    SEAM_REVISIONS,
    STATE_ERROR,
    Contributor,
    ContributorError,
    Instance,
    Session,
    ToolScript,
    contributors_param,
    object_param,
    revision_param,
    string_param,
    tool_order_param,
    tool_specs_param,
)
from reqfold.reference.shells.harness_stdio import Log, Notify
from reqfold.reference.shells.jsonl import (
    JsonlWriter,
    load_session_file,
    make_storage_line,
)

__all__ = ["STATE_ERROR", "HarnessServer", "Instance", "RpcError", "main", "serve"]

CAPABILITIES = ["codec", "harness", "strict"]

FEATURES = [
    "compact",
    "inject",
    "update",
    "seed",
    "step-start-seam",
    "session-prefix-seam",
    "request-messages-seam",
    "blocking-tools",
]
"""The optional harness features the reference supports: every one
(docs/adapter-protocol.md, "Optional features")."""

SETTLE_SECONDS = 5.0
"""How long a disposed instance's turn may take to end before it is cancelled."""


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
            return {
                **result,
                "name": adapter.NAME,
                "capabilities": CAPABILITIES,
                "features": FEATURES,
            }
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
        name = string_param(params, "session")
        session = self.sessions.get(name)
        if session is None:
            raise RpcError(INVALID_PARAMS, f"unknown session {name!r}")
        return session

    def instance_of(self, params: JsonObject) -> Instance:
        """The running instance `params` names (``RpcError`` when none)."""
        name = string_param(params, "instance")
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
        """``session/open``: create the session file, empty or seeded.

        A ``seed`` names a session file whose events the new one starts
        with, validated as if appended (LOG-6); the storage line records
        how many (``seedLength``) and where they came from.
        """
        name, log = string_param(params, "session"), string_param(params, "log")
        revision = revision_param(params)
        if name in self.sessions:
            raise RpcError(STATE_ERROR, f"session {name!r} is already open")
        seeded: list[JsonObject] = []
        parent: str | None = None
        if "seed" in params:
            seeded, parent = self.read_seed(string_param(params, "seed"), revision)
        storage = make_storage_line(
            name,
            DEMO_EPOCH_MS,
            parent_session=parent,
            seed_length=len(seeded) if "seed" in params else None,
            revision=revision.value,
        )
        try:
            JsonlWriter.create(log, storage, seeded)
        except (OSError, ValueError) as error:
            raise RpcError(
                INVALID_PARAMS, f"cannot create the session file {log!r}: {error}"
            ) from None
        last = max((int(event["time"]) for event in seeded), default=DEMO_EPOCH_MS)
        self.sessions[name] = Session(
            name=name, log=log, revision=revision, clock=counter_clock(last + 1)
        )
        return {"log": log}

    @staticmethod
    def read_seed(path: str, revision: Revision) -> tuple[list[JsonObject], str | None]:
        """The events of the seed file and its session id; refuses a bad seed."""
        try:
            loaded = load_session_file(path)
            if loaded.torn_tail is not None:
                raise ValueError("it ends in a partial line")
            SessionLog(loaded.events, revision=revision)  # LOG-6: as if appended
        except (OSError, ValueError, CodecError, PersistenceError) as error:
            raise RpcError(
                INVALID_PARAMS, f"cannot seed from {path!r}: {error}"
            ) from None
        parent = loaded.storage.get("id")
        return loaded.events, parent if isinstance(parent, str) else None

    async def start_instance(self, params: JsonObject) -> JsonObject:
        """``instance/start``: a new loop instance over the session's file."""
        session = self._session(params)
        name = string_param(params, "instance")
        revision = revision_param(params)
        provider = object_param(params, "provider")
        base_url, api_key = (
            string_param(provider, "baseUrl"),
            string_param(provider, "apiKey"),
        )
        dialect = string_param(provider, "dialect")
        config, system = object_param(params, "config"), string_param(params, "system")
        specs, tool_order = tool_specs_param(params), tool_order_param(params)
        contributors = contributors_param(params)
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

        def tool_started(tool: str, call: int) -> None:
            self.notify("tool/started", {"instance": name, "tool": tool, "call": call})

        script = ToolScript(started=tool_started)
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
        instance = self.instance_of(params)
        prompt = string_param(params, "prompt")
        if instance.turn is not None:
            raise RpcError(STATE_ERROR, f"instance {instance.name!r} is running a turn")
        if instance.loop.disposed:
            raise RpcError(STATE_ERROR, f"instance {instance.name!r} was disposed")
        task = asyncio.create_task(self.run_turn(instance, prompt))
        instance.turn = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        await asyncio.sleep(0)  # one loop iteration: the task runs to its first wait
        return {}

    async def cancel(self, params: JsonObject) -> JsonObject:
        """``instance/cancel``: abort the running turn (no effect while idle)."""
        instance = self.instance_of(params)
        reason = params.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise RpcError(INVALID_PARAMS, "param 'reason' must be a string")
        instance.loop.cancel(reason)
        return {}

    async def dispose(self, params: JsonObject) -> JsonObject:
        """``instance/dispose``: a running turn ends ``disposed``; no more turns."""
        self.instance_of(params).loop.dispose()
        return {}

    async def inject(self, params: JsonObject) -> JsonObject:
        """``instance/inject``: log a ``context/message`` (a one-shot turn if idle)."""
        instance = self.instance_of(params)
        text = string_param(params, "text")
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
        instance = self.instance_of(params)
        system = string_param(params, "system") if "system" in params else None
        specs = tool_specs_param(params) if "tools" in params else None
        order = tool_order_param(params)
        config = object_param(params, "config") if "config" in params else None
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
        self.instance_of(params).compact = True
        return {}

    async def release(self, params: JsonObject) -> JsonObject:
        """``contributor/release``: the blocked call returns its ``messages``."""
        instance = self.instance_of(params)
        ident = string_param(params, "contributor")
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

    async def run_turn(self, instance: Instance, prompt: str) -> None:
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
            self.turn_ended(instance, turn, reason)
            if not isinstance(error, Exception):
                raise  # cancelled (by `close`), or the interpreter is exiting
            return
        instance.turn = None
        self.turn_ended(instance, result.turn, result.reason)

    def turn_ended(self, instance: Instance, turn: int | None, reason: Any) -> None:
        """Report a turn's end (``turn/ended``): a seam for known-bad variants."""
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
        self._log(f"reqfold.reference.harness_adapter: {what}\n{detail}")

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


# ------------------------------------------------------------------ entry


async def serve(
    stdin: IO[bytes],
    stdout: IO[bytes],
    *,
    loop_class: type[AgentLoop] = AgentLoop,
    server_class: type[HarnessServer] = HarnessServer,
) -> int:
    """Serve `server_class` over `stdin`/`stdout` (`harness_stdio.serve`).

    Returns the exit status: 0, or 1 when stdout can no longer be written.
    """

    def make_server(notify: Notify, log: Log) -> HarnessServer:
        return server_class(notify, loop_class=loop_class, log=log)

    return await harness_stdio.serve(stdin, stdout, make_server=make_server)


def main(
    argv: Sequence[str] | None = None,
    *,
    loop_class: type[AgentLoop] = AgentLoop,
    server_class: type[HarnessServer] = HarnessServer,
) -> int:
    """Entry point of ``python -m reqfold.reference.harness_adapter``."""
    parser = argparse.ArgumentParser(
        prog="python -m reqfold.reference.harness_adapter",
        description="The reference harness over the reqfold adapter protocol"
        " (docs/adapter-protocol.md): JSON-RPC lines on stdin and stdout.",
    )
    parser.parse_args(argv)
    # this process runs on asyncio only: httpcore need not bring trio
    import_httpcore_without_trio()
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
