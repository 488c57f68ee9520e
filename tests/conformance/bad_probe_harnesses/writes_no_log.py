"""A chat harness that answers each line by calling the provider directly
and logs nothing. It exits 0. ``reqfold probe`` must fail CHECK-3: no
session log, so no request can be shown to follow from one."""

from __future__ import annotations

import os
import sys

import httpx

base = os.environ["OPENAI_BASE_URL"]
key = os.environ.get("OPENAI_API_KEY", "")
messages = [{"role": "system", "content": "You help."}]
with httpx.Client(base_url=base, timeout=30) as client:
    for line in sys.stdin:
        messages.append({"role": "user", "content": line.strip()})
        reply = client.post(
            "/chat/completions",
            json={"model": "deepseek-chat", "messages": messages},
            headers={"authorization": f"Bearer {key}"},
        ).json()
        text = reply["choices"][0]["message"]["content"]
        messages.append({"role": "assistant", "content": text})
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
