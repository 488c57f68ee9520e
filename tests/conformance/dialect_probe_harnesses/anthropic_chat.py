"""The reference chat speaking Anthropic messages
(`reqfold probe --dialect anthropic`)."""

from __future__ import annotations

from dialect_chat import chat_over

from reqfold.reference.shells.chat import main

raise SystemExit(main(chat=chat_over("anthropic")))
