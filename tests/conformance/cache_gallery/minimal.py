"""A minimal coding-agent harness, the base of the cache gallery.

Each gallery harness is this loop with one habit changed (one file each);
the cache judgement must name that habit. It speaks chat completions with
the standard library only, keeps its conversation in a state file so the
next process can resume it, and is started as::

    python -P HARNESS.py --url URL --state FILE --turns N [--fresh] [--day D]
        [--workdir DIR]

`--day` moves the harness's idea of today (its clock) so that a "next day"
resume is deterministic; `--workdir` is the project folder it lists.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import urllib.request
from dataclasses import dataclass
from typing import Any

BASE_SYSTEM = (
    "You are a careful coding agent working in the user's project.\n"
    + "".join(
        f"Rule {n}: read a file before you change it, and say what you changed.\n"
        for n in range(1, 31)
    )
)
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{description} " * 8,
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
            },
        },
    }
    for name, description in (
        ("read", "Read a file of the project."),
        ("write", "Write a file of the project."),
        ("bash", "Run a shell command in the project folder."),
    )
]


@dataclass
class Context:
    """What a harness knows when it builds a request."""

    turn: int
    """Turns sent so far in the session, over every process."""
    today: datetime.date
    workdir: str
    session: str
    """A per-session id (a hash, as real harnesses make)."""
    process_turn: int
    """Turns sent so far by this process."""


class Harness:
    """The clean harness: composes its opening once, only ever appends."""

    model = "deepseek-chat"

    def system(self, ctx: Context) -> str:
        return BASE_SYSTEM

    def tools(self, ctx: Context) -> list[dict[str, Any]]:
        return TOOLS

    def history(self, ctx: Context, messages: list[Any]) -> list[Any]:
        """The messages sent for the conversation so far."""
        return messages

    def store(self, message: dict[str, Any]) -> dict[str, Any]:
        """The assistant turn as the harness keeps it."""
        return message

    def model_for(self, ctx: Context) -> str:
        return self.model

    def side_requests(self, ctx: Context, messages: list[Any]) -> list[dict[str, Any]]:
        """Requests with an opening of their own, sent before the main one."""
        return []

    def before_turn(self, ctx: Context, messages: list[Any]) -> list[Any]:
        """The conversation as the harness keeps it at the start of a turn."""
        return messages

    def user_message(self, ctx: Context) -> dict[str, Any]:
        text = f"Turn {ctx.turn}: please look at the project and fix the next issue. "
        return {"role": "user", "content": text + "More detail. " * 20}

    def tool_output(self, call: dict[str, Any]) -> str:
        name = call["function"]["name"]
        return f"output of {name}:\n" + "a line of output\n" * 30

    path = "/chat/completions"
    """Where the requests go (another dialect's harness changes it)."""

    def body(self, ctx: Context, messages: list[Any]) -> dict[str, Any]:
        """The request for the conversation so far."""
        return {
            "model": self.model_for(ctx),
            "messages": [
                {"role": "system", "content": self.system(ctx)},
                *self.history(ctx, messages),
            ],
            "tools": self.tools(ctx),
        }

    def answer(self, reply: dict[str, Any]) -> dict[str, Any]:
        """The assistant message of a reply."""
        message: dict[str, Any] = reply["choices"][0]["message"]
        return message


def post(
    url: str, body: dict[str, Any], path: str = "/chat/completions"
) -> dict[str, Any]:
    request = urllib.request.Request(
        url + path,
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer k"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        reply: dict[str, Any] = json.loads(response.read())
    return reply


def main(harness: Harness) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--state", required=True)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--day", type=int, default=0)
    parser.add_argument("--workdir", default=".")
    args = parser.parse_args()
    state: dict[str, Any] = {"turn": 0, "messages": [], "sessions": 0}
    if os.path.exists(args.state):
        with open(args.state, encoding="utf-8") as file:
            state = json.load(file)
    if args.fresh or not state["messages"]:
        state["sessions"] += 1
        state["messages"] = []
    session = hashlib.sha256(f"session {state['sessions']}".encode()).hexdigest()[:16]
    today = datetime.date(2026, 12, 6) + datetime.timedelta(days=args.day)
    messages: list[Any] = state["messages"]
    for number in range(args.turns):
        ctx = Context(state["turn"], today, args.workdir, session, number)
        messages = harness.before_turn(ctx, messages)
        messages.append(harness.user_message(ctx))
        for side in harness.side_requests(ctx, messages):
            post(args.url, side)
        for _ in range(4):  # the tool loop
            body = harness.body(ctx, messages)
            answer = harness.answer(post(args.url, body, harness.path))
            messages.append(harness.store(answer))
            calls = answer.get("tool_calls") or []
            if not calls:
                break
            for call in calls:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call["id"],
                        "content": harness.tool_output(call),
                    }
                )
        state["turn"] += 1
    state["messages"] = messages
    with open(args.state, "w", encoding="utf-8") as file:
        json.dump(state, file)


if __name__ == "__main__":
    main(Harness())
