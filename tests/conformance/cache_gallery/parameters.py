"""An Anthropic harness that raises its thinking budget in the middle of a
session: a model parameter rendered into the prompt, so the cache breaks
after the opening (the parameters sit between the system prompt and the
messages)."""

from typing import Any

from minimal import BASE_SYSTEM, TOOLS, Context, Harness, main

MARK = {"cache_control": {"type": "ephemeral"}}


class RaisesTheThinkingBudget(Harness):
    path = "/v1/messages"

    def body(self, ctx: Context, messages: list[Any]) -> dict[str, Any]:
        tools = [
            {
                "name": tool["function"]["name"],
                "description": tool["function"]["description"],
                "input_schema": tool["function"]["parameters"],
            }
            for tool in TOOLS
        ]
        *earlier, last = messages
        marked = {
            **last,
            "content": [{"type": "text", "text": last["content"], **MARK}],
        }
        return {
            "model": "claude-sonnet-4-5",
            "max_tokens": 8000,
            "system": [{"type": "text", "text": BASE_SYSTEM * 3, **MARK}],
            "tools": tools,
            "thinking": {
                "type": "enabled",
                "budget_tokens": 2048 if ctx.turn >= 2 else 1024,
            },
            "messages": [*earlier, marked],
        }

    def answer(self, reply: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": reply["content"]}


if __name__ == "__main__":
    main(RaisesTheThinkingBudget())
