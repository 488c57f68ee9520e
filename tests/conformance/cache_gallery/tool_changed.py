"""One tool's description edited in the middle of a session."""

import copy
from typing import Any

from minimal import TOOLS, Context, Harness, main


class EditedTool(Harness):
    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        if ctx.turn < 2:
            return TOOLS
        tools = copy.deepcopy(TOOLS)
        tools[2]["function"]["description"] += "Never run rm."
        return tools


if __name__ == "__main__":
    main(EditedTool())
