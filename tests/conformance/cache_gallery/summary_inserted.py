"""Compaction: a summarizer request, then a summary in place of the history."""

from typing import Any

from minimal import Context, Harness, main

SUMMARIZER = "You summarize coding sessions in a few lines."


class Compacts(Harness):
    def before_turn(self, ctx: Context, messages: list[Any]) -> list[Any]:
        if ctx.turn != 3:
            return messages
        return [
            {
                "role": "user",
                "content": "Summary of the conversation so far: "
                f"{len(messages)} messages about fixing issues.",
            },
            {"role": "assistant", "content": "Understood."},
        ]

    def side_requests(self, ctx: Context, messages: list[Any]) -> list[dict[str, Any]]:
        if ctx.turn != 3:
            return []
        return [
            {
                "model": self.model,
                "messages": [
                    {"role": "system", "content": SUMMARIZER},
                    {"role": "user", "content": str(messages[:-1])[:2000]},
                ],
            }
        ]


if __name__ == "__main__":
    main(Compacts())
