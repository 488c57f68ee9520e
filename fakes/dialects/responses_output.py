"""OpenAI Responses API answers: output items, the response body, SSE events.

Per the Responses API's reference and the OpenAI SDK's types
(docs/fake-provider.md, "The Responses API"):

- the output is a list of items: a `reasoning` item (when the reply has
  reasoning: its text as a `summary_text` part when `reasoning.summary` is
  asked for, and an opaque `encrypted_content` when `include` names
  `reasoning.encrypted_content`), a `message` with one `output_text`
  part, then one `function_call` item per tool call (`id` `fc_...`,
  `call_id` `call_...`, `arguments` as the exact string);
- a reply cut by its length is `status: "incomplete"` with
  `incomplete_details.reason` `max_output_tokens`;
- usage: `input_tokens` (cached included), `input_tokens_details
  .cached_tokens`, `output_tokens`, `output_tokens_details
  .reasoning_tokens`, `total_tokens`;
- streaming: typed events `event: <type>\\ndata: <json>\\n\\n`, each
  payload with an increasing `sequence_number`, no `[DONE]`:
  `response.created`, `response.in_progress`, per item
  `response.output_item.added`, its parts and deltas
  (`response.reasoning_summary_text.delta`, `response.output_text.delta`,
  `response.function_call_arguments.delta`) and `response.output_item.done`,
  then `response.completed` (or `response.incomplete`) with the whole
  response, usage included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from reqfold.fakes.dialects.common import derive_hex, split_text
from reqfold.fakes.dialects.responses import ResponsesCall, normal_item
from reqfold.fakes.jsontypes import JsonObject, JsonValue, dumps_compact, json_object
from reqfold.fakes.profiles import Profile
from reqfold.fakes.script import Reply

ENCRYPTED_REASONING = "reasoning.encrypted_content"


class ResponsesUsage(TypedDict):
    """The usage object of a response."""

    input_tokens: int
    input_tokens_details: JsonObject
    output_tokens: int
    output_tokens_details: JsonObject
    total_tokens: int


def responses_usage(
    *, prompt: int, cached: int, completion: int, reasoning: int
) -> ResponsesUsage:
    """The usage object of a response."""
    return ResponsesUsage(
        input_tokens=prompt,
        input_tokens_details={"cached_tokens": cached},
        output_tokens=completion,
        output_tokens_details={"reasoning_tokens": reasoning},
        total_tokens=prompt + completion,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponsesAnswer:
    """Everything needed to render one successful answer."""

    profile: Profile
    index: int
    created: int
    call: ResponsesCall
    reply: Reply
    usage: ResponsesUsage
    diagnosis: JsonObject | None = None  # `prompt_cache_diagnostics`, if asked


def response_id(profile: Profile, index: int) -> str:
    """A deterministic `resp_...` id."""
    return "resp_" + derive_hex(profile.seed, index, "response", 48)


def _hex(answer: ResponsesAnswer, label: str) -> str:
    return derive_hex(answer.profile.seed, answer.index, label, 48)


def _wants_summary(call: ResponsesCall) -> bool:
    reasoning = call.body.get("reasoning")
    return isinstance(reasoning, dict) and reasoning.get("summary") is not None


def _wants_encrypted(call: ResponsesCall) -> bool:
    include = call.body.get("include")
    return isinstance(include, list) and ENCRYPTED_REASONING in include


def output_items(answer: ResponsesAnswer) -> list[JsonObject]:
    """The response's output items, in order: reasoning, message, calls."""
    reply, call = answer.reply, answer.call
    items: list[JsonObject] = []
    if reply.reasoning is not None:
        summary: list[JsonValue] = []
        if _wants_summary(call) and reply.reasoning:
            summary.append({"type": "summary_text", "text": reply.reasoning})
        item: JsonObject = {
            "id": "rs_" + _hex(answer, "reasoning"),
            "type": "reasoning",
            "summary": summary,
        }
        if _wants_encrypted(call):
            item["encrypted_content"] = "gAAAAA" + _hex(answer, "encrypted")
        items.append(item)
    if reply.text is not None and (reply.text or not reply.tool_calls):
        items.append(
            {
                "id": "msg_" + _hex(answer, "message"),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {
                        "type": "output_text",
                        "text": reply.text,
                        "annotations": [],
                        "logprobs": [],
                    }
                ],
            }
        )
    for position, tool_call in enumerate(reply.tool_calls):
        call_id = tool_call.id or "call_" + derive_hex(
            answer.profile.seed, answer.index, f"call{position}"
        )
        items.append(
            {
                "id": "fc_" + _hex(answer, f"item{position}"),
                "type": "function_call",
                "status": "completed",
                "arguments": tool_call.arguments,
                "call_id": call_id,
                "name": tool_call.name,
            }
        )
    return items


ECHOED_ITEMS = "output"
"""The member of an emitted answer that lists the items a harness sends
back (`reqfold.fakes.diagnostics` compares them with what it sent)."""


def emitted_items(answer: ResponsesAnswer) -> JsonObject:
    """The assistant message and function calls as a faithful harness sends
    them back, rendered as the prompt sees them (reasoning is left out: a
    harness may keep or drop it, as the API allows)."""
    shown = [
        normal_item(item)
        for item in output_items(answer)
        if item["type"] in ("message", "function_call")
    ]
    return {ECHOED_ITEMS: shown}


def _incomplete(reply: Reply) -> bool:
    return reply.effective_finish_reason == "length"


def response_body(
    answer: ResponsesAnswer,
    *,
    final: bool = True,
    output: list[JsonObject] | None = None,
) -> JsonObject:
    """The response object: whole (`final`), or as `response.created` shows it."""
    body, reply = answer.call.body, answer.reply
    reasoning = body.get("reasoning")
    reasoning = reasoning if isinstance(reasoning, dict) else {}
    status = "in_progress"
    if final:
        status = "incomplete" if _incomplete(reply) else "completed"
    text = body.get("text")
    response: JsonObject = {
        "id": response_id(answer.profile, answer.index),
        "object": "response",
        "created_at": answer.created,
        "status": status,
        "background": False,
        "error": None,
        "incomplete_details": (
            {"reason": "max_output_tokens"} if final and _incomplete(reply) else None
        ),
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": answer.call.model,
        "output": list(output_items(answer)) if output is None else list(output),
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": answer.call.previous_response_id,
        "prompt_cache_key": body.get("prompt_cache_key"),
        "reasoning": {
            "effort": reasoning.get("effort"),
            "summary": reasoning.get("summary"),
        },
        "store": answer.call.store,
        "temperature": body.get("temperature", 1.0),
        "text": text if isinstance(text, dict) else {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": list(answer.call.tools),
        "top_p": body.get("top_p", 1.0),
        "truncation": body.get("truncation", "disabled"),
        "usage": json_object(answer.usage) if final else None,
        "user": body.get("user"),
        "metadata": body.get("metadata", {}),
    }
    if answer.diagnosis is not None and final:
        response["prompt_cache_diagnostics"] = answer.diagnosis
    return response


def _event(kind: str, payload: JsonObject) -> bytes:
    return (
        f"event: {kind}\ndata: ".encode()
        + dumps_compact(payload).encode("utf-8")
        + b"\n\n"
    )


class _Events:
    """SSE frames with their `sequence_number`s."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def add(self, kind: str, **payload: JsonValue) -> None:
        event: JsonObject = {"type": kind, "sequence_number": len(self.frames)}
        event.update(payload)
        self.frames.append(_event(kind, event))


def responses_stream_frames(answer: ResponsesAnswer) -> list[bytes]:
    """The SSE event frames of a streamed answer."""
    size = answer.profile.chunk_chars
    events = _Events()
    events.add(
        "response.created", response=response_body(answer, final=False, output=[])
    )
    events.add(
        "response.in_progress", response=response_body(answer, final=False, output=[])
    )
    for position, item in enumerate(output_items(answer)):
        where: JsonObject = {"item_id": item["id"], "output_index": position}
        kind = item["type"]
        if kind == "reasoning":
            events.add(
                "response.output_item.added",
                output_index=position,
                item={**item, "summary": []},
            )
            for number, part in enumerate(_summaries(item)):
                text = part.get("text")
                assert isinstance(text, str)
                empty: JsonObject = {"type": "summary_text", "text": ""}
                events.add(
                    "response.reasoning_summary_part.added",
                    **where,
                    summary_index=number,
                    part=empty,
                )
                for piece in split_text(text, size):
                    events.add(
                        "response.reasoning_summary_text.delta",
                        **where,
                        summary_index=number,
                        delta=piece,
                    )
                events.add(
                    "response.reasoning_summary_text.done",
                    **where,
                    summary_index=number,
                    text=text,
                )
                events.add(
                    "response.reasoning_summary_part.done",
                    **where,
                    summary_index=number,
                    part=part,
                )
        elif kind == "message":
            text = answer.reply.text or ""
            events.add(
                "response.output_item.added",
                output_index=position,
                item={**item, "status": "in_progress", "content": []},
            )
            opening: JsonObject = {
                "type": "output_text",
                "text": "",
                "annotations": [],
                "logprobs": [],
            }
            events.add(
                "response.content_part.added", **where, content_index=0, part=opening
            )
            for piece in split_text(text, size):
                events.add(
                    "response.output_text.delta",
                    **where,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            events.add(
                "response.output_text.done",
                **where,
                content_index=0,
                text=text,
                logprobs=[],
            )
            events.add(
                "response.content_part.done",
                **where,
                content_index=0,
                part={**opening, "text": text},
            )
        else:
            arguments = item["arguments"]
            assert isinstance(arguments, str)
            events.add(
                "response.output_item.added",
                output_index=position,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in split_text(arguments, size):
                events.add(
                    "response.function_call_arguments.delta", **where, delta=piece
                )
            events.add(
                "response.function_call_arguments.done",
                **where,
                name=item["name"],
                arguments=arguments,
            )
        events.add("response.output_item.done", output_index=position, item=item)
    final = "response.incomplete" if _incomplete(answer.reply) else "response.completed"
    events.add(final, response=response_body(answer))
    return events.frames


def _summaries(item: JsonObject) -> list[JsonObject]:
    summary = item.get("summary")
    assert isinstance(summary, list)
    return [part for part in summary if isinstance(part, dict)]
