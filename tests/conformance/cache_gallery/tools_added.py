"""A tool added in the middle of a session (a plugin that connects late)."""

from typing import Any

from minimal import TOOLS, Context, Harness, main

SEARCH = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the project.",
        "parameters": {"type": "object", "properties": {}},
    },
}


class LateTool(Harness):
    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [*TOOLS, SEARCH] if ctx.turn >= 2 else TOOLS


if __name__ == "__main__":
    main(LateTool())
