"""A cache_control marker on the last user turn only: it moves every turn."""

from typing import Any

from minimal import Context, Harness, main

MARK = {"type": "ephemeral"}


class MovingMarker(Harness):
    def history(self, ctx: Context, messages: list[Any]) -> list[Any]:
        last = len(messages) - 1
        return [
            {
                **m,
                "content": [
                    {"type": "text", "text": m["content"], "cache_control": MARK}
                ]
                if position == last
                else [{"type": "text", "text": m["content"]}],
            }
            if m["role"] == "user"
            else m
            for position, m in enumerate(messages)
        ]


if __name__ == "__main__":
    main(MovingMarker())
