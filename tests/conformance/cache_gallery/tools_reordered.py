"""Tools listed in another order once the session has grown."""

from typing import Any

from minimal import TOOLS, Context, Harness, main


class Reordered(Harness):
    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return list(reversed(TOOLS)) if ctx.turn >= 2 else TOOLS


if __name__ == "__main__":
    main(Reordered())
