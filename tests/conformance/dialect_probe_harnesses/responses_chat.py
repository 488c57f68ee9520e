"""The reference chat speaking the OpenAI Responses API
(`reqfold probe --dialect openai-responses`)."""

from __future__ import annotations

from dialect_chat import chat_over

from reqfold.reference.shells.chat import main

raise SystemExit(main(chat=chat_over("openai-responses")))
