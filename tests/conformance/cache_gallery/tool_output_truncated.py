"""Old tool output cut short when a new turn starts (to save context)."""

from typing import Any

from minimal import Context, Harness, main


class TruncatesOutput(Harness):
    def before_turn(self, ctx: Context, messages: list[Any]) -> list[Any]:
        return [
            {**m, "content": m["content"][:40] + " [truncated]"}
            if m["role"] == "tool"
            else m
            for m in messages
        ]


if __name__ == "__main__":
    main(TruncatesOutput())
