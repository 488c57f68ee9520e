"""The assistant's text kept with its whitespace trimmed and a newline added."""

from typing import Any

from minimal import Harness, main


class Retypes(Harness):
    def store(self, message: dict[str, Any]) -> dict[str, Any]:
        return {**message, "content": (message.get("content") or "").strip() + "\n"}


if __name__ == "__main__":
    main(Retypes())
