"""Compaction as pi does it: a summary inserted before the messages kept."""

from typing import Any

from minimal import Context, Harness, main


class PrependsSummary(Harness):
    def before_turn(self, ctx: Context, messages: list[Any]) -> list[Any]:
        if ctx.turn != 3:
            return messages
        summary = {
            "role": "user",
            "content": "The conversation history before this point was compacted"
            " into the following summary: fixing issues in main.py.",
        }
        return [summary, *messages]


if __name__ == "__main__":
    main(PrependsSummary())
