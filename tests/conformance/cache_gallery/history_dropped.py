"""Never sends its history: each request is the opening and the latest user turn."""

from typing import Any

from minimal import Context, Harness, main


class DropsHistory(Harness):
    def history(self, ctx: Context, messages: list[Any]) -> list[Any]:
        return messages[-1:]


if __name__ == "__main__":
    main(DropsHistory())
