"""A one-line system prompt reworded mid-conversation, with two tools.

The opening is short, so the openings before and after the edit look
little alike; the conversation continues, so it is one stream and a break.
"""

from typing import Any

from minimal import TOOLS, Context, Harness, main

BEFORE = "You are a helpful assistant. Answer briefly and precisely. Rule 1: be kind."
AFTER = "You are a helpful assistant. Answer tersely. Rule 1: be kind."


class Reworded(Harness):
    def system(self, ctx: Context) -> str:
        return AFTER if ctx.turn >= 3 else BEFORE

    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return TOOLS[:2]


if __name__ == "__main__":
    main(Reworded())
