"""Scripted replies and faults: what the fake answers, in order.

A `Script` holds a queue of actions and an optional responder function.
For each provider request the fake takes, in order: the next queued action;
else the responder's answer (if it returns one); else the default reply
(text `"ok"`, configurable). An action is either

- a `Reply`: text, reasoning, tool calls (arguments sent byte for byte as
  given), a finish reason, and delivery knobs: a delay or a `Gate` (or a
  gate name) held before the first byte, SSE keep-alive comments before the
  first event, and `cut_after` to drop the connection after that many
  stream frames (a stream cut mid-way); or
- a `Fault`: an HTTP error in the dialect's error shape (429 with
  `retry-after`, 500, 529 overloaded, ...), optionally delayed.

Behaviour-named constructors: `rate_limited`, `server_error`, `overloaded`,
`stream_cut`, `slow_first_byte`. `parse_script_item` reads the JSON form
the `/_fake/script` endpoint accepts; `dump_script_item` writes it.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from reqfold.fakes.errors import ScriptError
from reqfold.fakes.gate import Gate
from reqfold.fakes.jsontypes import (
    JsonObject,
    JsonValue,
    dumps_compact,
    has_lone_surrogate,
    type_name,
)
from reqfold.fakes.routes import RequestMatch, RequestTexts

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call in a scripted reply.

    `arguments` is the exact string sent on the wire (a harness must echo
    it byte for byte); use `ToolCall.of` to build it from a mapping.
    `id` is generated deterministically when `None`.
    """

    name: str
    arguments: str = "{}"
    id: str | None = None

    def __post_init__(self) -> None:
        _check_text("name", self.name)
        _check_text("arguments", self.arguments)
        if self.id is not None:
            _check_text("id", self.id)

    @classmethod
    def of(
        cls,
        name: str,
        arguments: Mapping[str, object] | str = "{}",
        id: str | None = None,
    ) -> ToolCall:
        """Build a call, serializing a mapping as compact JSON (order kept)."""
        text = (
            arguments if isinstance(arguments, str) else dumps_compact(dict(arguments))
        )
        return cls(name=name, arguments=text, id=id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A scripted successful answer and how to deliver it.

    Attributes:
        text: the assistant text; `None` sends no text.
        reasoning: DeepSeek `reasoning_content` / Anthropic thinking text.
        tool_calls: calls to emit, in order.
        finish_reason: chat-completions finish reason; default `tool_calls`
            when there are calls, else `stop`. Anthropic maps it to a stop
            reason (`stop` -> `end_turn`, `tool_calls` -> `tool_use`,
            `length` -> `max_tokens`).
        completion_tokens: report this instead of the counted output tokens.
        delay: seconds to wait before the first byte.
        hold: a `Gate` (or the name of one of the provider's gates) awaited
            before the first byte.
        keepalives: SSE `: keep-alive` comment lines sent before the first
            event of a stream.
        cut_after: drop the connection after this many stream frames (for
            a non-streaming reply, after half of the body).
    """

    text: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    completion_tokens: int | None = None
    delay: float = 0.0
    hold: Gate | str | None = None
    keepalives: int = 0
    cut_after: int | None = None

    def __post_init__(self) -> None:
        _check_delivery(self.delay, self.hold)
        for name in ("text", "reasoning", "finish_reason"):
            value = getattr(self, name)
            if value is not None:
                _check_text(name, value)
        for call in self.tool_calls:
            if not isinstance(call, ToolCall):
                raise TypeError(f"tool_calls holds ToolCall, not {type(call).__name__}")
        if self.completion_tokens is not None:
            _check_count("completion_tokens", self.completion_tokens)
        if self.cut_after is not None and self.cut_after < 0:
            raise ValueError(f"cut_after must be >= 0, got {self.cut_after}")
        if self.keepalives < 0:
            raise ValueError(f"keepalives must be >= 0, got {self.keepalives}")

    @property
    def effective_finish_reason(self) -> str:
        """The finish reason sent: the scripted one or the natural default."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True, slots=True, kw_only=True)
class Fault:
    """A scripted HTTP error, rendered in the dialect's error shape."""

    status: int = 500
    retry_after: float | None = None
    message: str | None = None
    error_type: str | None = None
    delay: float = 0.0
    hold: Gate | str | None = None

    def __post_init__(self) -> None:
        _check_delivery(self.delay, self.hold)
        if not 400 <= self.status <= 599:
            raise ValueError(f"a fault status must be 4xx or 5xx, got {self.status}")
        for name in ("message", "error_type"):
            value = getattr(self, name)
            if value is not None:
                _check_text(name, value)
        if self.retry_after is not None:
            _check_seconds("retry_after", self.retry_after)


Action = Reply | Fault


@dataclass(frozen=True, slots=True, kw_only=True)
class ScriptedRequest:
    """What a responder function sees of a request."""

    index: int
    path: str
    dialect: str
    body: JsonObject
    key: str = ""
    """The digest of the request's API key ("" without one)."""
    texts: RequestTexts
    """What routes match it by, as its dialect reads them
    (`Dialect.texts`)."""

    @property
    def system_text(self) -> str:
        """The system text, in any dialect (`RequestTexts.system`)."""
        return self.texts.system

    @property
    def tool_names(self) -> list[str]:
        """The names of the request's tools."""
        return list(self.texts.tools)

    @property
    def model(self) -> str:
        """The request's `model` field."""
        model = self.body.get("model")
        return model if isinstance(model, str) else ""

    @property
    def messages(self) -> list[JsonValue]:
        """The request's `messages` array."""
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def last_user_text(self) -> str:
        """Text of the last user message that has text, or `""`, in any
        dialect (`RequestTexts.last_user`)."""
        return self.texts.last_user

    @property
    def last_message(self) -> JsonValue:
        """The last message, or `None`."""
        return self.messages[-1] if self.messages else None


Responder = Callable[[ScriptedRequest], Action | None]


class Script:
    """A queue of actions, an optional responder and a default reply."""

    def __init__(self, default: Reply | None = None) -> None:
        self._queue: deque[Action] = deque()
        self._routes: list[tuple[RequestMatch, deque[Action]]] = []
        self._responder: Responder | None = None
        self.default = default

    def route(self, match: RequestMatch, *actions: Action) -> None:
        """Queue actions for the requests `match` holds for: they take these
        before the plain queue, and no other request takes them."""
        for action in actions:
            if not isinstance(action, Reply | Fault):
                raise TypeError(f"expected Reply or Fault, got {type(action).__name__}")
        for known, queue in self._routes:
            if known == match:
                queue.extend(actions)
                return
        self._routes.append((match, deque(actions)))

    def routes(self) -> list[tuple[RequestMatch, list[Action]]]:
        """Each route and its queued actions, next first."""
        return [(match, list(queue)) for match, queue in self._routes]

    def __len__(self) -> int:
        return len(self._queue) + sum(len(queue) for _, queue in self._routes)

    def push(self, *actions: Action) -> None:
        """Queue actions to answer the next requests, in order."""
        for action in actions:
            if not isinstance(action, Reply | Fault):
                raise TypeError(f"expected Reply or Fault, got {type(action).__name__}")
        self._queue.extend(actions)

    def respond_with(self, responder: Responder | None) -> None:
        """Answer requests the queue does not cover with `responder(request)`."""
        self._responder = responder

    def pending(self) -> list[Action]:
        """The queued actions, next first."""
        return list(self._queue)

    def clear(self) -> None:
        """Empty the queue and remove the responder."""
        self._queue.clear()
        self._routes.clear()
        self._responder = None

    def next_action(self, request: ScriptedRequest, fallback: Reply) -> Action:
        """Take the action answering `request`: a matching route's first,
        then the queue's, the responder's, the default."""
        for match, queue in self._routes:
            if queue and match.holds(request):
                return queue.popleft()
        if self._queue:
            return self._queue.popleft()
        if self._responder is not None:
            action = self._responder(request)
            if action is not None:
                if not isinstance(action, Reply | Fault):
                    raise TypeError(
                        "a responder must return Reply, Fault or None, "
                        f"got {type(action).__name__}"
                    )
                return action
        return self.default if self.default is not None else fallback


def rate_limited(retry_after: float = 1.0, message: str | None = None) -> Fault:
    """A 429 with a `retry-after` header."""
    return Fault(status=429, retry_after=retry_after, message=message)


def server_error(status: int = 500, message: str | None = None) -> Fault:
    """A 5xx server error."""
    return Fault(status=status, message=message)


def overloaded(retry_after: float | None = None) -> Fault:
    """Anthropic's 529 `overloaded_error` (chat dialects send it as 529 too)."""
    return Fault(status=529, retry_after=retry_after, error_type="overloaded_error")


def stream_cut(after_frames: int, reply: Reply | None = None) -> Reply:
    """`reply` (default text) whose connection drops after `after_frames` frames."""
    base = reply if reply is not None else Reply(text="this stream is cut short")
    return replace(base, cut_after=after_frames)


def slow_first_byte(
    reply: Reply | None = None, *, delay: float = 0.0, hold: Gate | str | None = None
) -> Reply:
    """`reply` held back before its first byte by a delay and/or a gate."""
    base = reply if reply is not None else Reply(text="ok")
    return replace(base, delay=delay, hold=hold)


def _check_delivery(delay: float, hold: object) -> None:
    _check_seconds("delay", delay)
    if hold is not None and not isinstance(hold, Gate | str):
        raise TypeError(
            f"hold must be a Gate or a gate name, not {type(hold).__name__}"
        )
    if isinstance(hold, str):
        _check_text("hold", hold)


def _check_seconds(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(
            f"{name} must be a number of seconds, not {type(value).__name__}"
        )
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int too large for a float
        finite = False
    if not finite or value < 0:
        shown = str(value) if len(str(value)) <= 40 else str(value)[:40] + "..."
        raise ValueError(f"{name} must be a finite number >= 0, got {shown}")


def _check_count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")


def _check_text(name: str, value: object) -> None:
    """A string that is valid Unicode: it must be sent as UTF-8 later."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, not {type(value).__name__}")
    if has_lone_surrogate(value):
        raise ValueError(
            f"{name} holds an unpaired UTF-16 surrogate (not valid Unicode text)"
        )


# --- the JSON form used by the control endpoints ---------------------------

_REPLY_KEYS = frozenset(
    {"text", "reasoning", "tool_calls", "finish_reason", "completion_tokens"}
    | {"delay", "hold", "keepalives", "cut_after"}
)
_FAULT_KEYS = frozenset({"status", "retry_after", "message", "type", "delay", "hold"})
_FAULT_NAMES: dict[str, Callable[[], Fault]] = {
    "rate_limited": rate_limited,
    "server_error": server_error,
    "overloaded": overloaded,
}


def parse_script_item(value: JsonValue) -> Action:
    """Read one scripted action from its JSON form.

    A reply: `{"text": "hi", "reasoning": "...", "tool_calls": [{"name":
    "read", "arguments": {"path": "a"}, "id": "call_1"}], "finish_reason":
    "stop", "delay": 0, "hold": "gate-name", "keepalives": 0, "cut_after":
    3}` (every key optional). A fault: `{"fault": "rate_limited"}` or
    `{"fault": {"status": 429, "retry_after": 2, "message": "...", "type":
    "rate_limit_error"}}`.

    Raises:
        ScriptError: the value is not a valid action.
    """
    if not isinstance(value, dict):
        raise ScriptError(
            f"a scripted action must be an object, got {type_name(value)}"
        )
    try:
        if "fault" in value:
            return _parse_fault(value)
        return _parse_reply(value)
    except (TypeError, ValueError) as error:
        if isinstance(error, ScriptError):
            raise
        raise ScriptError(f"invalid scripted action: {error}") from error


def _parse_fault(value: JsonObject) -> Fault:
    extra = set(value) - {"fault"}
    if extra:
        raise ScriptError(f"a fault takes only the key 'fault', got {sorted(extra)}")
    spec = value["fault"]
    if isinstance(spec, str):
        if spec not in _FAULT_NAMES:
            raise ScriptError(f"unknown fault {spec!r}; known: {sorted(_FAULT_NAMES)}")
        return _FAULT_NAMES[spec]()
    if not isinstance(spec, dict):
        raise ScriptError(f"'fault' must be a name or an object, got {type_name(spec)}")
    unknown = set(spec) - _FAULT_KEYS
    if unknown:
        raise ScriptError(f"unknown fault keys {sorted(unknown)}")
    return Fault(
        status=_int(spec.get("status", 500), "status"),
        retry_after=_opt_number(spec.get("retry_after"), "retry_after"),
        message=_opt_str(spec.get("message"), "message"),
        error_type=_opt_str(spec.get("type"), "type"),
        delay=_number(spec.get("delay", 0.0), "delay"),
        hold=_opt_str(spec.get("hold"), "hold"),
    )


def _parse_reply(value: JsonObject) -> Reply:
    unknown = set(value) - _REPLY_KEYS
    if unknown:
        raise ScriptError(
            f"unknown reply keys {sorted(unknown)}; known: {sorted(_REPLY_KEYS)}"
        )
    calls = value.get("tool_calls", [])
    if not isinstance(calls, list):
        raise ScriptError(f"'tool_calls' must be an array, got {type_name(calls)}")
    tool_calls = tuple(
        _parse_call(call, position) for position, call in enumerate(calls)
    )
    cut_after = value.get("cut_after")
    completion_tokens = value.get("completion_tokens")
    return Reply(
        text=_opt_str(value.get("text"), "text"),
        reasoning=_opt_str(value.get("reasoning"), "reasoning"),
        tool_calls=tool_calls,
        finish_reason=_opt_str(value.get("finish_reason"), "finish_reason"),
        completion_tokens=(
            None
            if completion_tokens is None
            else _int(completion_tokens, "completion_tokens")
        ),
        delay=_number(value.get("delay", 0.0), "delay"),
        hold=_opt_str(value.get("hold"), "hold"),
        keepalives=_int(value.get("keepalives", 0), "keepalives"),
        cut_after=None if cut_after is None else _int(cut_after, "cut_after"),
    )


def _parse_call(call: JsonValue, position: int) -> ToolCall:
    if not isinstance(call, dict):
        raise ScriptError(
            f"tool_calls[{position}] must be an object, got {type_name(call)}"
        )
    name = call.get("name")
    if not isinstance(name, str):
        raise ScriptError(f"tool_calls[{position}].name must be a string")
    arguments = call.get("arguments", "{}")
    if isinstance(arguments, dict):
        arguments = dumps_compact(arguments)
    if not isinstance(arguments, str):
        raise ScriptError(
            f"tool_calls[{position}].arguments must be a string or an object, "
            f"got {type_name(arguments)}"
        )
    return ToolCall(name=name, arguments=arguments, id=_opt_str(call.get("id"), "id"))


def dump_script_item(action: Action) -> JsonObject:
    """Write one action in the JSON form `parse_script_item` reads."""
    hold = action.hold.name if isinstance(action.hold, Gate) else action.hold
    if isinstance(action, Fault):
        return {
            "fault": {
                "status": action.status,
                "retry_after": action.retry_after,
                "message": action.message,
                "type": action.error_type,
                "delay": action.delay,
                "hold": hold,
            }
        }
    return {
        "text": action.text,
        "reasoning": action.reasoning,
        "tool_calls": [
            {"name": call.name, "arguments": call.arguments, "id": call.id}
            for call in action.tool_calls
        ],
        "finish_reason": action.finish_reason,
        "completion_tokens": action.completion_tokens,
        "delay": action.delay,
        "hold": hold,
        "keepalives": action.keepalives,
        "cut_after": action.cut_after,
    }


def _int(value: JsonValue, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScriptError(f"'{name}' must be an integer, got {json.dumps(value)}")
    return value


def _number(value: JsonValue, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScriptError(f"'{name}' must be a number, got {json.dumps(value)}")
    return float(value)


def _opt_number(value: JsonValue, name: str) -> float | None:
    return None if value is None else _number(value, name)


def _opt_str(value: JsonValue, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ScriptError(f"'{name}' must be a string, got {type_name(value)}")
    return value


def actions_from(values: Iterable[JsonValue]) -> list[Action]:
    """Parse several JSON actions (all or nothing)."""
    return [parse_script_item(value) for value in values]


def replies(values: Iterable[str]) -> list[Reply]:
    """Text replies, one per string (a shorthand for scripts)."""
    return [Reply(text=value) for value in values]
