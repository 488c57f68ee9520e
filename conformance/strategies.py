"""Hypothesis strategies for the contract's values: headers, deltas, logs.

Public so the suite can drive differential tests of other implementations
against the reference with the same generators the reference is tested
with. Strategies are named for what they produce. Each is built once per
set of arguments (``functools.cache``) and draws only from strategies built
beforehand: building a strategy costs hypothesis validation, a label and
an emptiness check, more than the draw itself, and a test that builds one
per example (``flatmap``) pays it every time.
"""

from __future__ import annotations

import copy
import random
from functools import cache
from typing import Any, TypeVar

from hypothesis import strategies as st

from reqfold.reference.header import canonical_header, fold_step, header_equals
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.writer import record_header

T = TypeVar("T")

_NAMES = ("read", "write", "grep", "bash", "echo", "lookup")
_LINES = ("", "a", "b", "You are helpful.", "Use tools.", "x\r", "  indented")


def system_prompts() -> st.SearchStrategy[str]:
    """System prompts built from a small line alphabet, so edits repeat lines."""
    return st.lists(st.sampled_from(_LINES), max_size=6).map("\n".join)


def tool_schemas(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A tool schema with the given name and a varying description."""
    return st.builds(
        lambda description, required: {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "required": required},
        },
        st.sampled_from(["", "v1", "v2"]),
        st.lists(st.sampled_from(["path", "query"]), max_size=2, unique=True),
    )


@cache
def tool_lists() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Tool lists with unique names in any order."""
    names = st.lists(st.sampled_from(_NAMES), unique=True, max_size=5)
    schemas = {name: tool_schemas(name) for name in _NAMES}

    @st.composite
    def draw_tools(draw: st.DrawFn) -> list[dict[str, Any]]:
        return [draw(schemas[name]) for name in draw(names)]

    return draw_tools()


def configs() -> st.SearchStrategy[dict[str, Any]]:
    """Call configs with optional sampling members (``stop: []`` included)."""
    return st.fixed_dictionaries(
        {"model": st.sampled_from(["m1", "m2"])},
        optional={
            "temperature": st.sampled_from([0, 0.5, 1.0]),
            "maxTokens": st.sampled_from([1, 256]),
            "stop": st.lists(st.sampled_from(["<END>", "\n"]), max_size=2),
        },
    )


def message_lists() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Short lists of framing messages."""
    message = st.builds(
        lambda text: {"role": "user", "content": [{"type": "text", "text": text}]},
        st.sampled_from(["opener", "catalog", "reminder"]),
    )
    return st.lists(message, max_size=2)


@cache
def headers(revision: Revision = LATEST) -> st.SearchStrategy[dict[str, Any]]:
    """Headers of `revision`, canonical or not (empty fields appear)."""
    optional: dict[str, st.SearchStrategy[Any]] = {
        "system": system_prompts(),
        "tools": tool_lists(),
    }
    for field in revision.message_fields:
        optional[field] = message_lists()
    return st.fixed_dictionaries({"config": configs()}, optional=optional)


@cache
def header_sequences(
    revision: Revision = LATEST, *, min_size: int = 1, max_size: int = 6
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Sequences of headers, as the requests of one session would carry."""
    return st.lists(headers(revision), min_size=min_size, max_size=max_size)


# ------------------------------------------------------------ the core profile
#
# What a conforming writer hands its codec: headers whose config carries
# members beyond the four sampling ones (EQ-2) and values where booleans
# sit next to numbers (JSON-2), in any member order (JSON-3); pairs of
# headers that differ by the edits a harness makes between two requests;
# and logs of header events written by the reference writer. The
# differential properties (`reqfold.conformance.codec.properties`) send these to
# an implementation and compare its answers with the reference's.
#
# They draw only from strategies built once, here: building a strategy
# inside a draw costs hypothesis far more than the draw itself.

_MODELS = ("m1", "m2", "m3")
_CONFIG_VALUES: dict[str, tuple[Any, ...]] = {
    "temperature": (0, 0.5, 1.0),
    "maxTokens": (1, 256, 256.0),
    "stop": ([], ["<END>"], ["\n", "<END>"]),
    "topP": (0.9, 1),
    "stream": (True, False, 1, 0),
    "responseFormat": ({"type": "text"}, {"type": "json_object"}),
}
"""Each optional config member and the values it takes: the first three are
CONFIG-2's, the others any member a provider may accept (CONFIG-2, EQ-2)."""

_EDIT_WEIGHTS = {
    "config-extra": 2,
    "config-retype": 2,
    "tools-move": 3,
    "tools-insert": 3,
    "system": 2,
    "messages": 2,
    "tools-append": 1,
    "tools-remove": 1,
    "tools-change": 1,
    "config-model": 1,
    "config-member": 1,
    "config-order": 1,
}
"""The edits a harness makes to its header between two requests, weighted
toward those a codec most often gets wrong: a config member beyond the
sampling ones (EQ-2), a value swapped for its lookalike (JSON-2: ``true``
and ``1`` differ, ``1`` and ``1.0`` do not), a change no delta can carry
(a tool moved or inserted mid-list: DELTA-6, WRITER-4)."""

_EDITS = tuple(edit for edit, weight in _EDIT_WEIGHTS.items() for _ in range(weight))

_LOOKALIKES: tuple[tuple[Any, ...], ...] = (
    (True, 1, 1.0),
    (False, 0, 0.0),
    (256, 256.0),
)
"""Values a loose comparison confuses, each with the others of its group."""

_EXTRA_KEYS = ("stream", "responseFormat", "topP")
"""Config members beyond CONFIG-2's: equality must see them (EQ-2)."""

_NOISE: tuple[dict[str, Any], ...] = (
    {"type": "step/start", "data": {"turn": 1, "step": 1}},
    {
        "type": "user/message",
        "data": {"content": [{"type": "text", "text": "hi"}]},
        "surfaceOp": "append",
    },
    {
        "type": "assistant/message",
        "data": {"content": [{"type": "text", "text": "ok"}]},
        "surfaceOp": "append",
    },
    {"type": "x-acme/telemetry", "data": {"tokens": 12}},
)
"""Events of other types a log holds between header events (FOLD-1 skips them)."""

_EPOCH_MS = 1767225600000
_DESCRIPTIONS = ("", "v1", "v2")
_REQUIRED: tuple[list[str], ...] = (
    [],
    ["path"],
    ["query"],
    ["path", "query"],
    ["query", "path"],
)


def _unwrapped(strategy: st.SearchStrategy[T]) -> st.SearchStrategy[T]:
    """The strategy hypothesis draws from when `strategy` is drawn.

    Hypothesis hands most strategies out in a lazy wrapper and, on every
    draw from the wrapper, looks up the strategy inside it again: a tenth
    of the time of a core-profile search, which draws from the few below
    tens of thousands of times. Drawing from the inner one draws the same
    choices under the same labels. Without the attribute (another
    Hypothesis), the strategy is used as it is.
    """
    inner = getattr(strategy, "wrapped_strategy", strategy)
    return inner if isinstance(inner, st.SearchStrategy) else strategy


_INDEX = _unwrapped(st.integers(0, 15))
_SHUFFLE = _unwrapped(st.integers(0, 2**16))
_FLAG = _unwrapped(st.booleans())
_CONFIG_KEYS = _unwrapped(st.lists(st.sampled_from(list(_CONFIG_VALUES)), unique=True))
_NOISE_LIST = _unwrapped(st.lists(st.sampled_from(range(len(_NOISE))), max_size=2))
_TOOL_NAMES = _unwrapped(st.lists(st.sampled_from(_NAMES), unique=True, max_size=5))
_SYSTEM_PROMPTS = _unwrapped(system_prompts())
_MESSAGE_LISTS = _unwrapped(message_lists())


def _pick(draw: st.DrawFn, count: int) -> int:
    """An index below `count` (> 0), shrinking to 0."""
    return draw(_INDEX) % count


def _reordered(
    draw: st.DrawFn, mapping: dict[str, Any], *, keep_first: int = 0
) -> dict[str, Any]:
    """`mapping` as it is, or with its members (after `keep_first`) shuffled."""
    keys = list(mapping)
    if draw(_FLAG):
        tail = keys[keep_first:]
        random.Random(draw(_SHUFFLE)).shuffle(tail)
        keys[keep_first:] = tail
    return {key: mapping[key] for key in keys}


def _draw_tool(draw: st.DrawFn, name: str) -> dict[str, Any]:
    """A tool schema like `tool_schemas` makes, in two draws."""
    return {
        "name": name,
        "description": _DESCRIPTIONS[_pick(draw, len(_DESCRIPTIONS))],
        "parameters": {
            "type": "object",
            "required": list(_REQUIRED[_pick(draw, len(_REQUIRED))]),
        },
    }


def _draw_config(draw: st.DrawFn) -> dict[str, Any]:
    config: dict[str, Any] = {"model": _MODELS[_pick(draw, len(_MODELS))]}
    for key in draw(_CONFIG_KEYS):
        values = _CONFIG_VALUES[key]
        config[key] = copy.deepcopy(values[_pick(draw, len(values))])
    return _reordered(draw, config, keep_first=1)


def _draw_tools(draw: st.DrawFn) -> list[dict[str, Any]]:
    return [_draw_tool(draw, name) for name in draw(_TOOL_NAMES)]


def _draw_header(draw: st.DrawFn, revision: Revision) -> dict[str, Any]:
    header: dict[str, Any] = {"config": _draw_config(draw)}
    if draw(_FLAG):
        header["system"] = draw(_SYSTEM_PROMPTS)
    if _pick(draw, 4) != 0:
        header["tools"] = _draw_tools(draw)
    for field in revision.message_fields:
        if draw(_FLAG):
            header[field] = draw(_MESSAGE_LISTS)
    return _reordered(draw, header)


@cache
def core_configs() -> st.SearchStrategy[dict[str, Any]]:
    """Configs with any optional members, ``model`` first, the rest in any order."""
    return _unwrapped(st.composite(_draw_config)())


@cache
def core_headers(revision: Revision = LATEST) -> st.SearchStrategy[dict[str, Any]]:
    """Valid headers of `revision`, canonical or not (empty fields appear),
    members in any order."""

    @st.composite
    def draw_header(draw: st.DrawFn) -> dict[str, Any]:
        return _draw_header(draw, revision)

    return _unwrapped(draw_header())


@cache
def canonical_headers(
    revision: Revision = LATEST,
) -> st.SearchStrategy[dict[str, Any]]:
    """Headers of `revision` in canonical form (HDR-4, HDR-5), as a log holds them."""
    return core_headers(revision).map(lambda h: canonical_header(h, revision))


def edited_headers(
    header: dict[str, Any], revision: Revision = LATEST
) -> st.SearchStrategy[dict[str, Any]]:
    """`header` after one to three edits a harness makes between requests.

    Edits may cancel out or change nothing (a tool changed to the same
    schema), so the result can equal `header`.
    """

    @st.composite
    def draw_edited(draw: st.DrawFn) -> dict[str, Any]:
        return _edited(draw, header, revision)

    return draw_edited()


def _edited(
    draw: st.DrawFn,
    header: dict[str, Any],
    revision: Revision,
    edits: tuple[str, ...] = _EDITS,
) -> dict[str, Any]:
    result = copy.deepcopy(header)
    count = 1 if _pick(draw, 4) < 3 else 2 + _pick(draw, 2)
    for _ in range(count):
        _edit(draw, result, edits[_pick(draw, len(edits))], revision)
    return result


def _edit(
    draw: st.DrawFn, header: dict[str, Any], edit: str, revision: Revision
) -> None:
    tools: list[dict[str, Any]] = header.get("tools", [])
    if edit.startswith("tools-") and "tools" not in header:
        header["tools"] = tools
    config: dict[str, Any] = header["config"]
    if edit == "system":
        lines = header["system"].split("\n") if header.get("system") else []
        at = _pick(draw, len(lines) + 1)
        line = _LINES[_pick(draw, len(_LINES))]
        action = _pick(draw, 3)
        if action == 0 or at == len(lines):
            lines.insert(at, line)
        elif action == 1:
            lines[at] = line
        else:
            del lines[at]
        header["system"] = "\n".join(lines)
    elif edit == "tools-move" and len(tools) > 1:  # never back where it was
        at = _pick(draw, len(tools))
        tool = tools.pop(at)
        tools.insert((at + 1 + _pick(draw, len(tools))) % (len(tools) + 1), tool)
    elif edit.startswith("tools-move") or edit in ("tools-append", "tools-insert"):
        names = {tool["name"] for tool in tools}
        unused = [name for name in _NAMES if name not in names]
        if unused:
            tool = _draw_tool(draw, unused[_pick(draw, len(unused))])
            end = len(tools)  # an insertion lands before the end when it can
            at = end if edit == "tools-append" or not end else _pick(draw, end)
            tools.insert(at, tool)
    elif edit == "tools-remove" and tools:
        del tools[_pick(draw, len(tools))]
    elif edit == "tools-change" and tools:
        at = _pick(draw, len(tools))
        tools[at] = _draw_tool(draw, tools[at]["name"])
    elif edit == "config-model":
        config["model"] = _MODELS[_pick(draw, len(_MODELS))]
    elif edit in ("config-member", "config-extra"):
        keys = _EXTRA_KEYS if edit == "config-extra" else list(_CONFIG_VALUES)
        key = keys[_pick(draw, len(keys))]
        values = _CONFIG_VALUES[key]
        choice = _pick(draw, len(values) + 1)
        if choice == len(values):
            config.pop(key, None)
        else:
            config[key] = copy.deepcopy(values[choice])
    elif edit == "config-retype":
        _retype(draw, config)
    elif edit == "config-order":
        header["config"] = _reordered(draw, config)
    elif edit == "messages":
        if not revision.message_fields:  # none in this revision: edit the prompt
            _edit(draw, header, "system", revision)
            return
        field = revision.message_fields[_pick(draw, len(revision.message_fields))]
        header[field] = draw(_MESSAGE_LISTS)


def _retype(draw: st.DrawFn, config: dict[str, Any]) -> None:
    """Swap a config value for a lookalike (``true`` for ``1``, ``1`` for
    ``1.0``); without such a value, set ``stream``."""
    keys = [key for key in config if _lookalikes(config[key])]
    if not keys:
        config["stream"] = (True, 1)[_pick(draw, 2)]
        return
    key = keys[_pick(draw, len(keys))]
    choices = _lookalikes(config[key])
    if key in ("temperature", "maxTokens"):  # numbers by CONFIG-2
        choices = [value for value in choices if not isinstance(value, bool)]
    if choices:
        config[key] = choices[_pick(draw, len(choices))]


def _lookalikes(value: Any) -> list[Any]:
    for group in _LOOKALIKES:
        for index, member in enumerate(group):
            if type(member) is type(value) and member == value:
                return [other for at, other in enumerate(group) if at != index]
    return []


def _respelt(
    draw: st.DrawFn, header: dict[str, Any], revision: Revision
) -> dict[str, Any]:
    """`header` spelt differently: empty fields added or dropped (equal by
    EQ-1), fields reordered (equal: the canonical form orders them), and
    maybe config members reordered (unequal by JSON-3, a SHOULD)."""
    result = canonical_header(header, revision)
    for field in revision.header_fields[1:]:
        if field not in result and draw(_FLAG):
            result[field] = "" if field == "system" else []
    result["config"] = _reordered(draw, result["config"])
    return _reordered(draw, result)


@cache
def header_pairs(
    revision: Revision = LATEST,
    *,
    canonical: bool = False,
    differing: bool = False,
) -> st.SearchStrategy[tuple[dict[str, Any], dict[str, Any]]]:
    """Two headers of `revision`: the second an edit of the first, the same
    header in another spelling (empty fields added or dropped, members
    reordered), the first with a value swapped for a lookalike (``true``
    for ``1``, ``1.0`` for ``1``: JSON-2), or an unrelated one.

    With `canonical`, both are in canonical form; with `differing`, they are
    never equal (EQ-1), as the two sides of a delta.
    """

    @st.composite
    def draw_pair(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
        first = _draw_header(draw, revision)
        kind = _pick(draw, 5)
        if kind < 2:
            second = _edited(draw, first, revision)
        elif kind == 2:
            second = _draw_header(draw, revision)
        elif kind == 3:
            second = _respelt(draw, first, revision)
        else:  # one value swapped for a lookalike (JSON-2)
            if not any(_lookalikes(value) for value in first["config"].values()):
                stream = _LOOKALIKES[_pick(draw, 2)]
                first["config"]["stream"] = stream[_pick(draw, len(stream))]
            second = copy.deepcopy(first)
            _retype(draw, second["config"])
        if differing and header_equals(first, second, revision):
            second = _edited(draw, first, revision)  # once more
        if canonical:
            first = canonical_header(first, revision)
            second = canonical_header(second, revision)
        if differing and header_equals(first, second, revision):
            config = second["config"]  # no edit took: change the model
            model = _MODELS[(_MODELS.index(config["model"]) + 1) % len(_MODELS)]
            second = {**second, "config": {**config, "model": model}}
        return first, second

    return _unwrapped(draw_pair())


@cache
def writer_inputs(
    revision: Revision = LATEST,
) -> st.SearchStrategy[tuple[dict[str, Any] | None, bool, dict[str, Any]]]:
    """What a writer decides from: ``(baseline, logged_this_instance, header)``.

    The baseline is what the log folds to (canonical, or None for a log
    without header events); the header is the request's, in any spelling.
    Every decision comes up: an instance's first request on a new log or a
    resumed one (WRITER-1), a later request with the same header (WRITER-2),
    with an edit a delta carries (WRITER-3), and with tools moved or
    inserted mid-list, which no delta carries (WRITER-4).
    """

    @st.composite
    def draw_inputs(
        draw: st.DrawFn,
    ) -> tuple[dict[str, Any] | None, bool, dict[str, Any]]:
        scenario = _pick(draw, 5)
        if scenario == 0:
            return None, False, _draw_header(draw, revision)
        first, header = draw(header_pairs(revision))
        if scenario == 4:  # a change that does not round-trip, given two tools
            first = _edited(draw, first, revision, ("tools-append",) * 2)
            header = _edited(draw, first, revision, ("tools-move", "tools-insert"))
        return canonical_header(first, revision), scenario != 1, header

    return _unwrapped(draw_inputs())


@cache
def header_logs(
    revision: Revision = LATEST,
    *,
    max_instances: int = 3,
    max_requests: int = 4,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Session logs of header events as the reference writer logs them.

    One to `max_instances` loop instances, each sending one to
    `max_requests` requests whose headers evolve by edits; the log holds
    the writer's snapshots (initial, resume, fallback) and deltas, seqs
    from 0, and events of other types in between.
    """

    @st.composite
    def draw_log(draw: st.DrawFn) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []

        def append(event: dict[str, Any]) -> None:
            seq = len(events)
            envelope = {"type": event["type"], "seq": seq}
            envelope["time"] = _EPOCH_MS + seq * 1000
            rest = {k: v for k, v in event.items() if k != "type"}
            events.append({**envelope, **rest})

        baseline: dict[str, Any] | None = None
        header = _draw_header(draw, revision)
        for _ in range(1 + _pick(draw, max_instances)):
            for request in range(1 + _pick(draw, max_requests)):
                for noise in draw(_NOISE_LIST):
                    append(copy.deepcopy(_NOISE[noise]))
                if draw(_FLAG):
                    header = _edited(draw, header, revision)
                event = record_header(baseline, request > 0, header, revision)
                if event is not None:
                    append(event)
                    baseline = fold_step(baseline, events[-1], revision)
        return events

    return _unwrapped(draw_log())
