"""The reference chat, with the wall-clock time in its system prompt: every
turn logs a system delta (so every request still rebuilds from the log),
and every turn's request misses the provider's cache from the system
prompt on. ``reqfold probe``'s cache timeline must say where it broke."""

from __future__ import annotations

import time

from reqfold.reference.shells.chat import SYSTEM, Chat, main


class ClockInSystemPrompt(Chat):
    def system_prompt(self) -> str:
        return f"Current time: {time.time_ns()} ns.\n{SYSTEM}"


raise SystemExit(main(chat=ClockInSystemPrompt))
