"""A tool taken away in the middle of a session (a plugin that disconnects)."""

from typing import Any

from minimal import TOOLS, Context, Harness, main


class DropsATool(Harness):
    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return (
            [t for t in TOOLS if t["function"]["name"] != "bash"]
            if ctx.turn >= 2
            else TOOLS
        )


if __name__ == "__main__":
    main(DropsATool())
