"""The reference chat speaking Anthropic messages with the wall-clock time
in its system prompt: every request's system prompt differs, and the
provider's own diagnostics say `system_changed` where the probe's timeline
says where the cache broke."""

from __future__ import annotations

import time

from dialect_chat import chat_over

from reqfold.reference.shells.chat import SYSTEM, Chat, main


class ClockInSystemPrompt(Chat):
    def system_prompt(self) -> str:
        return f"Current time: {time.time_ns()} ns.\n{SYSTEM}"


raise SystemExit(main(chat=chat_over("anthropic", ClockInSystemPrompt)))
