"""A sliding window: only the last four messages of the conversation are sent."""

from typing import Any

from minimal import Context, Harness, main


class SlidingWindow(Harness):
    def history(self, ctx: Context, messages: list[Any]) -> list[Any]:
        return messages[-4:]


if __name__ == "__main__":
    main(SlidingWindow())
