"""Two tools grown to five mid-conversation (MCP servers that connect late).

Most of the tool list is new, so the openings look little alike; the
conversation continues, so it is one stream and a break.
"""

from typing import Any

from minimal import BASE_SYSTEM, TOOLS, Context, Harness, main

SHORT_SYSTEM = BASE_SYSTEM.splitlines()[0]
MCP = [
    {
        "type": "function",
        "function": {
            "name": f"mcp_{letter}",
            "description": f"A tool of MCP server {letter}.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for letter in "abc"
]


class McpLate(Harness):
    def system(self, ctx: Context) -> str:
        return SHORT_SYSTEM

    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return [*TOOLS[:2], *MCP] if ctx.turn >= 3 else TOOLS[:2]


if __name__ == "__main__":
    main(McpLate())
