"""`/clear` at the third turn: the conversation restarts under the same opening."""

from typing import Any

from minimal import Context, Harness, main


class Clears(Harness):
    def before_turn(self, ctx: Context, messages: list[Any]) -> list[Any]:
        return [] if ctx.turn == 2 else messages


if __name__ == "__main__":
    main(Clears())
