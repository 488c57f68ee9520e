"""A title generator: a side request with an opening of its own, every process."""

from typing import Any

from minimal import Context, Harness, main


class TitleWriter(Harness):
    def side_requests(self, ctx: Context, messages: list[Any]) -> list[dict[str, Any]]:
        if ctx.process_turn != 0:
            return []
        ask = "Write a five-word title for this request:\n" + messages[-1]["content"]
        return [
            {
                "model": self.model,
                "messages": [
                    {"role": "system", "content": "You write short titles."},
                    {"role": "user", "content": ask},
                ],
            }
        ]


if __name__ == "__main__":
    main(TitleWriter())
