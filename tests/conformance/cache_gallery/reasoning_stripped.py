"""Reasoning dropped from earlier assistant turns when a new turn starts."""

from typing import Any

from minimal import Context, Harness, main


class DropsReasoning(Harness):
    def before_turn(self, ctx: Context, messages: list[Any]) -> list[Any]:
        return [
            {k: v for k, v in m.items() if k != "reasoning_content"} for m in messages
        ]


if __name__ == "__main__":
    main(DropsReasoning())
