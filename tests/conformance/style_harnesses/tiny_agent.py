"""A tiny coding-agent harness in the styles real ones offer (see README.md).

One process per turn (``turn``) or JSON lines on stdin/stdout (``jsonl``);
configuration from ``tiny.json`` in the working folder or the environment;
the conversation in ``.tiny/session.json``. Requests are non-streaming chat
completions sent with urllib (nothing to import but the standard library).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

STATE = Path(".tiny") / "session.json"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the project.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    }
]
BASE = "You are tiny, a small coding agent. Answer briefly."
SUMMARIZER = "You summarize conversations in one short paragraph."


def settings() -> dict[str, str]:
    """Base URL, key and model: tiny.json in the working folder, else env."""
    config = Path("tiny.json")
    if config.exists():
        value = json.loads(config.read_text(encoding="utf-8"))
        return {
            "base_url": value["baseUrl"],
            "api_key": value["apiKey"],
            "model": value.get("model", "deepseek-chat"),
        }
    return {
        "base_url": os.environ["TINY_BASE_URL"],
        "api_key": os.environ.get("TINY_API_KEY", ""),
        "model": "deepseek-chat",
    }


def system_prompt(args: argparse.Namespace, session_id: str) -> str:
    lines = [BASE]
    if args.session_hash:
        lines.insert(0, f"Session: {session_id}")
    if args.tree:
        files = sorted(name for name in os.listdir(".") if not name.startswith("."))
        lines.append("Files: " + ", ".join(files))
    if args.date:
        lines.append(f"Current date: {datetime.date.today().isoformat()}")
    if args.nonce:
        lines.append(f"Request: {uuid.uuid4().hex}")
    return "\n".join(lines)


def complete(body: dict[str, Any]) -> str:
    config = settings()
    request = urllib.request.Request(
        config["base_url"].rstrip("/") + "/chat/completions",
        data=json.dumps({"model": config["model"], **body}).encode("utf-8"),
        headers={
            "content-type": "application/json",
            "authorization": f"Bearer {config['api_key']}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    return str(answer["choices"][0]["message"]["content"] or "")


def list_models() -> None:
    """GET /models first, as some harnesses do; a 404 is ignored."""
    config = settings()
    request = urllib.request.Request(config["base_url"].rstrip("/") + "/models")
    with contextlib.suppress(urllib.error.HTTPError):
        urllib.request.urlopen(request, timeout=30).close()


def load(resume: bool) -> dict[str, Any]:
    if resume and STATE.exists():
        state: dict[str, Any] = json.loads(STATE.read_text(encoding="utf-8"))
        return state
    return {"id": uuid.uuid4().hex, "messages": [], "system": None}


def save(state: dict[str, Any]) -> None:
    STATE.parent.mkdir(exist_ok=True)
    STATE.write_text(json.dumps(state), encoding="utf-8")


def turn(args: argparse.Namespace, state: dict[str, Any], prompt: str) -> str:
    if state["system"] is None or not args.keep_system or args.nonce:
        state["system"] = system_prompt(args, state["id"])
    state["messages"].append({"role": "user", "content": prompt})
    messages = [{"role": "system", "content": state["system"]}, *state["messages"]]
    body: dict[str, Any] = {"messages": messages, "tools": TOOLS}
    if args.cache_key:
        body[args.cache_key] = state["id"]
    text = complete(body)
    state["messages"].append({"role": "assistant", "content": text})
    save(state)
    return text


def compact(state: dict[str, Any]) -> None:
    history = "\n".join(f"{m['role']}: {m['content']}" for m in state["messages"])
    summary = complete(
        {
            "messages": [
                {"role": "system", "content": SUMMARIZER},
                {"role": "user", "content": history},
            ]
        }
    )
    state["messages"] = [{"role": "user", "content": f"Summary so far: {summary}"}]
    state["messages"].append({"role": "assistant", "content": "Understood."})
    save(state)


def run_jsonl(args: argparse.Namespace) -> int:
    state = load(args.continue_)
    print(json.dumps({"type": "ready"}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        if command.get("type") == "prompt":
            print(json.dumps({"type": "agent_start"}), flush=True)
            text = turn(args, state, command["message"])
            print(json.dumps({"type": "message_end", "text": text}), flush=True)
            print(json.dumps({"type": "agent_end"}), flush=True)
        elif command.get("type") == "compact":
            compact(state)
            print(
                json.dumps({"type": "response", "command": "compact", "success": True}),
                flush=True,
            )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["turn", "jsonl"])
    parser.add_argument("prompt", nargs="?")
    parser.add_argument("--continue", dest="continue_", action="store_true")
    parser.add_argument("--date", action="store_true")
    parser.add_argument("--tree", action="store_true")
    parser.add_argument("--session-hash", action="store_true")
    parser.add_argument(
        "--nonce", action="store_true", help="a new id in every request's system"
    )
    parser.add_argument(
        "--keep-system",
        action="store_true",
        help="compose the system prompt once per session, not once per process",
    )
    parser.add_argument(
        "--cache-key",
        metavar="FIELD",
        help="send the session id in this request field (as Codex sends its"
        " conversation id in prompt_cache_key): a new cache partition per session",
    )
    parser.add_argument("--prompt-file")
    parser.add_argument(
        "--list-models", action="store_true", help="GET /models before the turn"
    )
    args = parser.parse_intermixed_args()
    if args.list_models:
        list_models()
    if args.mode == "jsonl":
        return run_jsonl(args)
    prompt = args.prompt
    if args.prompt_file:
        prompt = Path(args.prompt_file).read_text(encoding="utf-8")
    if not prompt:
        print("tiny: give a prompt", file=sys.stderr)
        return 2
    state = load(args.continue_)
    if prompt.strip() == "/compact":
        compact(state)
        print("compacted")
        return 0
    print(turn(args, state, prompt))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
