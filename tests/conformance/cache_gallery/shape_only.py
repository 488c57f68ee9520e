"""Earlier user turns re-sent as one text part instead of a string."""

from typing import Any

from minimal import Context, Harness, main


class Reshapes(Harness):
    def history(self, ctx: Context, messages: list[Any]) -> list[Any]:
        last = len(messages) - 1
        return [
            {**m, "content": [{"type": "text", "text": m["content"]}]}
            if m["role"] == "user" and position < last
            else m
            for position, m in enumerate(messages)
        ]


if __name__ == "__main__":
    main(Reshapes())
