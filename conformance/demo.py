"""``reqfold demo``: a scripted session of the reference loop against the fake provider.

Runs in process, with no network and a deterministic clock, so the log it
writes is the same byte for byte on every run. The script shows each part
of the contract once (docs/reference-harness.md annotates the result):

1. a new session; a session-prefix contributor; a tool call (two requests
   in one turn, the second extending the first);
2. a mid-run system-prompt change (a logged ``request/header-delta``);
3. a tool reorder (a ``fallback`` snapshot: no delta can express it);
4. a new loop instance over the persisted log (a resume), whose prefix
   contributor is cancelled mid-composition on its first turn (the turn
   ends ``aborted``, nothing is cached or sent) and recomposes a larger
   prefix on the next (the drift shows on the ``resume`` snapshot).

It prints, per request, the prompt tokens the fake counted, how many it
reported cached and uncached, and what in the log explains a miss; then it
rebuilds every request from the log alone and compares it with what the
fake captured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reqfold.conformance.output import ReaderMayLeave
from reqfold.conformance.written_files import default_mode
from reqfold.fakes import (
    FakeProvider,
    FakeTransport,
    Reply,
    ToolCall,
    dump_captured_request,
)
from reqfold.fakes.dialects.registry import DEFAULT_DIALECT
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import (
    AgentLoop,
    ChatCompletionsClient,
    PrefixContext,
    Tool,
    ToolContext,
    TurnResult,
    counter_clock,
    create_session_file,
    open_session_file,
)
from reqfold.reference.loop.clock import DEMO_EPOCH_MS
from reqfold.reference.loop.errors import PersistenceFailed
from reqfold.reference.loop.waterfall import Next
from reqfold.reference.reconstruct import (
    RebuiltRequest,
    compare_with_captures,
    rebuild_requests,
)

MODEL = "deepseek-chat"
BASE_URL = "http://fake-provider.invalid"

PERSONA = "\n".join(
    [
        "You are the reqfold demo assistant.",
        "You answer questions about a small key-value store.",
        "Always look a key up with the lookup tool before answering.",
        "Answer in one short sentence and quote the value exactly.",
        "Never guess a value; if a lookup fails, say so.",
        "Keep a friendly, plain tone; no lists, no headings.",
    ]
)
NEW_SECTION = "When a value is a number, also say whether it is even."

STORE = {"alpha": "42", "beta": "7", "gamma": "1000"}


def _text(value: str) -> JsonObject:
    return {"type": "text", "text": value}


def _user(value: str) -> JsonObject:
    return {"role": "user", "content": [_text(value)]}


RULES = _user(
    "Project rules (from AGENTS.md): keys are lower-case ASCII; values are"
    " strings; the store is read-only; cite the key you looked up."
)
SKILLS = _user(
    "Skill catalog: `lookup` reads one key; `list_keys` lists every key in"
    " the store, sorted."
)


async def _lookup(arguments: Any, context: ToolContext) -> str:
    key = str(arguments.get("key", ""))
    return f"{key} = {STORE[key]}" if key in STORE else f"no key {key!r}"


async def _list_keys(arguments: Any, context: ToolContext) -> str:
    return ", ".join(sorted(STORE))


TOOLS = [
    Tool(
        name="lookup",
        description="Read the value of one key.",
        parameters={
            "type": "object",
            "properties": {"key": {"type": "string"}},
            "required": ["key"],
        },
        execute=_lookup,
    ),
    Tool(
        name="list_keys",
        description="List every key in the store.",
        parameters={"type": "object", "properties": {}},
        execute=_list_keys,
    ),
]


async def _rules(context: PrefixContext, prefix: Any, next: Next[Any]) -> list[Any]:
    return [RULES, *await next()]


class _SkillCatalog:
    """A prefix contributor whose first composition is cancelled mid-way."""

    def __init__(self) -> None:
        self.runs = 0

    async def __call__(
        self, context: PrefixContext, prefix: Any, next: Next[Any]
    ) -> list[Any]:
        self.runs += 1
        if self.runs == 1:
            # The user presses Escape while the catalog is being scanned.
            context.loop.cancel("user cancelled while the skill catalog loaded")
            return [*await next()]
        return [*await next(), SKILLS]


def _script(fake: FakeProvider) -> None:
    fake.push(
        Reply(
            text="Let me look that up.",
            tool_calls=(ToolCall.of("lookup", {"key": "alpha"}, id="call_1"),),
        ),
        Reply(text="alpha is 42."),
        Reply(
            text="Checking beta.",
            tool_calls=(ToolCall.of("lookup", {"key": "beta"}, id="call_2"),),
        ),
        Reply(text="beta is 7, which is odd."),
        Reply(text="The keys are alpha, beta and gamma."),
        Reply(
            text="Looking gamma up.",
            tool_calls=(ToolCall.of("lookup", {"key": "gamma"}, id="call_3"),),
        ),
        Reply(text="gamma is 1000, which is even."),
    )


@dataclass
class _Turn:
    instance: int
    prompt: str
    result: TurnResult
    requests: int


async def _scenario(
    fake: FakeProvider, log: Path, out: Output
) -> tuple[list[_Turn], AgentLoop]:
    clock = counter_clock()
    turns: list[_Turn] = []

    async def send(loop: AgentLoop, instance: int, prompt: str) -> None:
        before = len(loop.requests)
        result = await loop.send(prompt)
        turns.append(_Turn(instance, prompt, result, len(loop.requests) - before))

    async with ChatCompletionsClient(
        base_url=BASE_URL, api_key="demo-key", transport=FakeTransport(fake)
    ) as client:
        session, sink = create_session_file(
            log, session_id="reqfold-demo", created_at=DEMO_EPOCH_MS
        )
        first = AgentLoop(
            provider=client,
            model=MODEL,
            system=PERSONA,
            tools=TOOLS,
            tool_order=["lookup", "list_keys"],
            clock=clock,
            session=session,
            sink=sink,
        )
        first.hooks.session_prefix.register(_rules)
        await send(first, 1, "What is the value of alpha?")
        first.system = PERSONA + "\n" + NEW_SECTION
        await send(first, 1, "And beta?")
        first.tool_order = ["list_keys", "lookup"]
        await send(first, 1, "Which keys exist?")
        first.dispose()

        session, sink = open_session_file(log)
        second = AgentLoop(
            provider=client,
            model=MODEL,
            system=PERSONA + "\n" + NEW_SECTION,
            tools=TOOLS,
            tool_order=["list_keys", "lookup"],
            clock=clock,
            session=session,
            sink=sink,
        )
        second.hooks.session_prefix.register(_rules)
        second.hooks.session_prefix.register(_SkillCatalog())
        await send(second, 2, "What about gamma?")
        await send(second, 2, "What about gamma?")
    return turns, second


def _explain(rebuilt: RebuiltRequest, events: list[JsonObject]) -> str:
    """What the log says about this request's header, in a few words."""
    if rebuilt.header_seq is None:
        return "no header event: header unchanged, history appended"
    event = events[rebuilt.header_seq]
    if event["type"] == "request/header":
        reason = event["data"]["reason"]
        prefix = len(event["data"]["header"].get("messagePrefix", []))
        if reason == "initial":
            return f"'initial' snapshot (new session; prefix of {prefix})"
        if reason == "resume":
            return f"'resume' snapshot (new instance; prefix recomposed: {prefix})"
        return "'fallback' snapshot: tools reordered (no delta can say it)"
    arms = ", ".join(event["data"])
    return f"header delta ({arms})"


def _expected_breaks(loop: AgentLoop) -> dict[int, str]:
    """Per captured request index: why its prompt may not extend the one
    before, where the log records a header change (a delta, a fallback or a
    resume snapshot): `CACHE-1` holds only while the log records none, and
    `reqfold check --requests` reads the capture's `expect_break`."""
    events = loop.session.events
    sent = [r for r in rebuild_requests(events, loop.revision) if r.sent]
    expected: dict[int, str] = {}
    for index, rebuilt in enumerate(sent):
        if rebuilt.header_seq is None:
            continue
        event = events[rebuilt.header_seq]
        if event["type"] == "request/header" and event["data"]["reason"] == "initial":
            continue
        expected[index] = "the log records " + _explain(rebuilt, events)
    return expected


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def _report(
    fake: FakeProvider, turns: list[_Turn], loop: AgentLoop, log: Path, out: Output
) -> int:
    events = loop.session.events
    w = out.write
    w("Turns\n")
    for number, turn in enumerate(turns, start=1):
        reason = turn.result.reason
        detail = reason["kind"]
        if "reason" in reason:
            detail += f" ({reason['reason']})"
        w(
            f"  turn {number}  instance {turn.instance}  {turn.prompt!r:32}"
            f" {turn.requests} request(s), {detail}\n"
        )
    sent = [r for r in rebuild_requests(events, loop.revision) if r.sent]
    w("\nRequests, as the fake provider counted them (DeepSeek: 64-token blocks)\n")
    w(
        f"  {'#':>2}  {'turn.step':9}  {'prompt':>6}  {'cached':>6}  {'uncached':>8}"
        f"  {'the fake saw':30}  what the log records\n"
    )
    for captured, rebuilt in zip(fake.requests, sent, strict=False):
        usage = captured.usage or {}
        diagnostic = captured.diagnostic
        prompt = _count(usage.get("prompt_tokens"))
        cached = _count(usage.get("prompt_cache_hit_tokens"))
        view = "-"
        if diagnostic is not None:
            view = diagnostic["relation"]
            if diagnostic["closest_request"] is not None:
                view += f" of #{diagnostic['closest_request']}"
            if diagnostic["divergence"] is not None:
                view += f" at {diagnostic['divergence']['segment']}"
        w(
            f"  {captured.index:>2}  {rebuilt.turn}.{rebuilt.step:<7}  {prompt:>6}"
            f"  {cached:>6}  {prompt - cached:>8}  {view:30}  "
            f"{_explain(rebuilt, events)}\n"
        )
    problems = compare_with_captures(
        events, [c.json for c in fake.requests], loop.revision
    )
    w(f"\nLog: {log} ({len(events)} events, {loop.last_turn} turns)\n")
    if problems:
        w("Reconstruction FAILED:\n" + "\n".join(problems) + "\n")
        return 1
    w(
        f"Reconstruction: all {len(sent)} requests the fake received rebuild"
        " exactly from the log alone.\n"
    )
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``reqfold demo``'s options."""
    parser.add_argument(
        "--log",
        required=True,
        type=_file_path,
        metavar="PATH",
        help="where to write the session log (JSONL; overwritten)",
    )
    parser.add_argument(
        "--requests",
        type=_file_path,
        metavar="PATH",
        help="also write the requests the fake captured (JSONL, one per line)",
    )


def _file_path(text: str) -> Path:
    """A path argument; an empty one is refused (Path('') would be '.')."""
    if not text:
        raise argparse.ArgumentTypeError("is empty: give the path of a file")
    return Path(text)


def _output_problem(option: str, path: Path) -> str | None:
    """Why `path` cannot take a file `option` writes, in one line, or None."""
    if path.is_dir():
        return f"{option} {str(path)!r} is a folder: give the path of a file"
    if path.exists() and not path.is_file():
        # a device or a pipe: renaming the finished file over it would
        # replace it (/dev/stdout, as root)
        return f"{option} {str(path)!r} is not a regular file: give the path of one"
    real = Path(os.path.realpath(path))  # a link: where the file it names goes
    above = next((p for p in real.parents if p.exists()), None)
    if above is not None and not above.is_dir():
        return f"{option} {str(path)!r}: {str(above)!r} is a file, not a folder"
    if not path.parent.is_dir():  # refused as `reqfold run` refuses a report's
        return f"{option} {str(path)!r}: the folder {str(path.parent)!r} does not exist"
    try:
        # only the folder of a file a link names is made (the link is kept)
        real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return f"{option} {str(path)!r}: cannot make its folder: {error.strerror}"
    if not os.access(real.parent, os.W_OK | os.X_OK):
        # the file is written beside its place, then renamed into it
        return (
            f"{option} {str(path)!r}: its folder {str(real.parent)!r} is not writable"
        )
    return None


def run(args: argparse.Namespace) -> int:
    """Run the demo; returns the exit status (1 if reconstruction fails).

    A log or requests path that cannot be written is a bad argument (2),
    said in one line, checked before anything runs where it can be.
    """
    outputs = [("--log", args.log), ("--requests", args.requests)]
    for option, path in outputs:
        problem = None if path is None else _output_problem(option, path)
        if problem is not None:
            sys.stderr.write(f"reqfold demo: {problem}\n")
            return 2
    if args.requests is not None and os.path.realpath(args.requests) == (
        os.path.realpath(args.log)
    ):
        sys.stderr.write(
            f"reqfold demo: --requests {str(args.requests)!r} is the file --log"
            " names: give another\n"
        )
        return 2
    try:
        return _run(args)
    except OSError as error:  # a full disk, a permission denied on the way
        where = f" {error.filename!s}" if error.filename else ""
        sys.stderr.write(f"reqfold demo: cannot write{where}: {error.strerror}\n")
        return 2
    except PersistenceFailed as error:  # the log's sink failed mid-session
        cause = error.__cause__
        why = cause.strerror if isinstance(cause, OSError) else str(error)
        sys.stderr.write(f"reqfold demo: cannot write {args.log}: {why}\n")
        return 2


class Output(ReaderMayLeave):
    """Standard output that its reader may leave (``| head``): what is left
    unread is dropped, and the demo goes on to write its files. Each write
    is flushed, so the transcript shows turn by turn even through a pipe."""

    def write(self, text: str) -> int:
        super().write(text)
        self.flush()
        return len(text)


def _run(args: argparse.Namespace) -> int:
    """The demo, written to temporary files beside the outputs (a link's
    target: the link stays) and renamed over them once all is written; on
    any failure or interrupt they are removed, the old files left whole."""
    out = Output(sys.stdout)
    log: Path = args.log
    requests: Path | None = args.requests
    targets = [Path(os.path.realpath(p)) for p in (log, requests) if p is not None]
    staged: list[Path] = []
    try:
        for target in targets:
            # a new file of a name no one can guess, beside its target
            descriptor, name = tempfile.mkstemp(
                ".demo", f"{target.name}.", target.parent
            )
            os.close(descriptor)
            staged.append(Path(name))
            os.chmod(name, default_mode())  # as `open` would make it
        fake = FakeProvider(DEFAULT_DIALECT)
        _script(fake)
        out.write(
            "reqfold demo: the reference loop against the fake DeepSeek provider,"
            " in process\n\n"
        )
        turns, loop = asyncio.run(_scenario(fake, staged[0], out))
        status = _report(fake, turns, loop, log, out)
        if requests is not None:
            try:
                with staged[1].open("w", encoding="utf-8", newline="\n") as handle:
                    expected = _expected_breaks(loop)
                    resumed = sum(t.requests for t in turns if t.instance == 1)
                    for captured in fake.requests:
                        line = dump_captured_request(captured)
                        if captured.index == resumed:
                            # what the fake cannot see: a new process began
                            line["process_start"] = "resume"
                        if captured.index in expected:
                            line["expect_break"] = expected[captured.index]
                        handle.write(json.dumps(line, ensure_ascii=False) + "\n")
            except OSError as error:  # a failed write names no file: name it
                raise OSError(error.errno, error.strerror, str(requests)) from None
            out.write(f"Requests: {requests} ({len(fake.requests)} captured)\n")
        for temporary, target in zip(staged, targets, strict=True):
            os.replace(temporary, target)
    except OSError as error:  # named as the user named the file, not its stand-in
        where = str(error.filename or "")
        for temporary, given in zip(staged, (log, requests), strict=False):
            if where.startswith(str(temporary)):
                raise OSError(error.errno, error.strerror, str(given)) from None
        raise
    finally:
        for temporary in staged:
            with contextlib.suppress(OSError):  # gone, or not ours to remove
                temporary.unlink()
    return status
