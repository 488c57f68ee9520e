"""A chat harness with a session file of its own (not reqfold's log) and
today's date near the end of its system prompt: ``--day N`` moves its
clock N days ahead. It prints ``> `` when ready. Resumed the next day,
its first request re-sends the whole conversation under a new date:
``reqfold probe`` with no log must judge the cache alone and name the
date as the cause (a CACHE-3 warning, no log rule in the verdict)."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

import httpx

parser = argparse.ArgumentParser()
parser.add_argument("--state", required=True, type=Path)
parser.add_argument("--day", type=int, default=0)
args = parser.parse_args()
today = datetime.date(2026, 12, 6) + datetime.timedelta(days=args.day)
system = (
    "You are a helpful coding agent.\n"
    + "".join(f"Rule {n}: read before you write.\n" for n in range(60))
    + f"Current date: {today.isoformat()}\n"
)
messages = json.loads(args.state.read_text()) if args.state.exists() else []
base = os.environ["OPENAI_BASE_URL"]
key = os.environ.get("OPENAI_API_KEY", "")
with httpx.Client(base_url=base, timeout=30) as client:
    sys.stdout.write("> ")
    sys.stdout.flush()
    for line in sys.stdin:
        messages.append({"role": "user", "content": line.strip()})
        reply = client.post(
            "/chat/completions",
            json={
                "model": "deepseek-chat",
                "messages": [{"role": "system", "content": system}, *messages],
            },
            headers={"authorization": f"Bearer {key}"},
        ).json()
        messages.append(
            {"role": "assistant", "content": reply["choices"][0]["message"]["content"]}
        )
        args.state.write_text(json.dumps(messages))
        sys.stdout.write("answered\n> ")
        sys.stdout.flush()
