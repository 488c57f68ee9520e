"""A small chat front end for the reference loop: one prompt per line on stdin.

``python -m reqfold.reference.chat --log-dir DIR`` reads the provider's base URL
and API key from the environment (``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` unless told other names), starts a new session whose
JSONL log goes into DIR (``<session id>.jsonl``), prints a ready prompt
(``> ``) and answers each line as one turn of the loop, printing the
assistant's text. ``--resume LOG`` continues an existing log with a new
loop instance instead. End of input ends the session (exit 0).

It is the worked example of ``reqfold probe`` (docs/probe.md): a harness
driven as a black box, over stdio and HTTP only. It behaves as ordinary
chat harnesses do: the session id and log path go to stderr at start, a
turn whose provider call fails is reported on stderr and the session goes
on (the exit status does not say whether turns succeeded; the log does).

The opening is composed once: a house-rules message as the session prefix
(``session-prefix``) or as per-request framing (``request-messages``,
where a short reminder also follows the history). ``--no-declare`` leaves
the revision off the storage line, as many real harnesses do (it is
optional, JSONL-1). The loop, its tools and its request are all the
reference's; only the shell is here. Test variants subclass `Chat`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reqfold.reference.errors import PersistenceError
from reqfold.reference.json_values import JsonObject
from reqfold.reference.loop import (
    AgentLoop,
    ChatCompletionsClient,
    Framing,
    PrefixContext,
    RequestMessagesContext,
    wall_clock,
)
from reqfold.reference.loop.waterfall import Next
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.jsonl import (
    JsonlWriter,
    load_session_file,
    make_storage_line,
)

PROMPT = "> "

SYSTEM = "\n".join(
    [
        "You are the reqfold chat assistant, a small example harness.",
        "Answer the user's question in one or two plain sentences.",
        "Be exact: never invent facts, names, numbers or quotations.",
        "When you do not know something, say so plainly and briefly.",
        "Keep a friendly, neutral tone; avoid lists, headings and markup.",
        "Every request you see is rebuilt from the session log alone.",
    ]
)

HOUSE_RULES: JsonObject = {
    "role": "user",
    "content": [
        {
            "type": "text",
            "text": "House rules: answer in English; keep answers short;"
            " cite nothing you did not read in this conversation.",
        }
    ],
}

REMINDER: JsonObject = {
    "role": "user",
    "content": [{"type": "text", "text": "(Reminder: one or two sentences.)"}],
}


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    """The options of ``python -m reqfold.reference.chat``."""
    parser = argparse.ArgumentParser(
        prog="python -m reqfold.reference.chat",
        description="Chat with the reference loop: one prompt per line on stdin.",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--log-dir", type=Path, help="start a new session; its log goes here"
    )
    where.add_argument("--resume", type=Path, metavar="LOG", help="continue this log")
    parser.add_argument(
        "--revision",
        choices=[r.value for r in Revision],
        default=LATEST.value,
        help="the contract revision a new session runs, or a resumed log whose"
        " storage line names none (default %(default)s)",
    )
    parser.add_argument(
        "--no-declare",
        action="store_true",
        help="leave the revision off the new log's storage line",
    )
    parser.add_argument("--model", default="deepseek-chat")
    parser.add_argument("--base-url-env", default="OPENAI_BASE_URL", metavar="NAME")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="NAME")
    return parser.parse_args(argv)


def _say(text: str) -> None:
    """One line to stderr, flushed."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _show(text: str) -> None:
    """Text to stdout, flushed (the prompt has no newline)."""
    sys.stdout.write(text)
    sys.stdout.flush()


class Chat:
    """One chat process: a loop instance over a new or resumed session log."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    def system_prompt(self) -> str:
        """The system prompt of the next turn (a variant may change it)."""
        return SYSTEM

    def client(self, base_url: str, api_key: str) -> ChatCompletionsClient:
        """The provider client (a variant may change what it sends)."""
        return ChatCompletionsClient(base_url=base_url, api_key=api_key)

    async def read_line(self) -> str:
        """The next line of input, "" at its end (a variant may drop some)."""
        return await asyncio.to_thread(sys.stdin.readline)

    def open_log(self) -> tuple[Any, Any, Revision, Path]:
        """The session log, its writer, its revision and its path."""
        args = self.args
        if args.resume is not None:
            loaded = load_session_file(args.resume)
            revision = Revision(loaded.storage.get("revision", args.revision))
            session = SessionLog(loaded.events, revision=revision)
            return session, JsonlWriter.open(args.resume), revision, args.resume
        revision = Revision(args.revision)
        session_id = uuid.uuid4().hex
        path = args.log_dir / f"{session_id}.jsonl"
        args.log_dir.mkdir(parents=True, exist_ok=True)
        declared = None if args.no_declare else revision.value
        storage = make_storage_line(session_id, wall_clock(), revision=declared)
        sink = JsonlWriter.create(path, storage)
        return SessionLog(revision=revision), sink, revision, path

    async def run(self) -> int:
        """Answer lines until end of input; returns the exit status."""
        base_url = os.environ.get(self.args.base_url_env, "")
        if not base_url:
            _say(f"chat: set {self.args.base_url_env} to the provider's base URL")
            return 2
        api_key = os.environ.get(self.args.api_key_env, "")
        try:
            session, sink, revision, path = self.open_log()
        except (OSError, PersistenceError, ValueError) as error:
            _say(f"chat: cannot open the session log: {error}")
            return 2
        _say(f"chat: session {_session_id(path)}, log {path}")
        async with self.client(base_url, api_key) as client:
            loop = AgentLoop(
                provider=client,
                model=self.args.model,
                system=self.system_prompt(),
                revision=revision,
                session=session,
                sink=sink,
            )
            _frame(loop)
            while True:
                _show(PROMPT)
                line = await self.read_line()
                if not line:
                    break
                prompt = line.strip()
                if not prompt:
                    continue
                loop.system = self.system_prompt()
                before = len(loop.replies)
                result = await loop.send(prompt)
                for reply in loop.replies[before:]:
                    text = "".join(
                        str(block.get("text", ""))
                        for block in reply.content
                        if block.get("type") == "text"
                    )
                    if text:
                        _show(text + "\n")
                if result.kind != "completed":
                    _say(f"chat: turn {result.turn} ended {json.dumps(result.reason)}")
            loop.dispose()
        _show("\n")
        return 0


def _frame(loop: AgentLoop) -> None:
    """Compose the opening in the seam the revision has."""
    if loop.revision is Revision.SESSION_PREFIX:

        async def prefix(
            context: PrefixContext, value: Any, next: Next[Any]
        ) -> list[Any]:
            return [HOUSE_RULES, *await next()]

        loop.hooks.session_prefix.register(prefix)
    elif loop.revision is Revision.REQUEST_MESSAGES:

        async def framing(
            context: RequestMessagesContext, value: Framing, next: Next[Framing]
        ) -> Framing:
            return Framing(before=[HOUSE_RULES], after=[REMINDER])

        loop.hooks.request_messages.register(framing)


def _session_id(path: Path) -> str:
    with path.open("rb") as handle:
        storage = json.loads(handle.readline())
    return str(storage.get("id", "?"))


def main(argv: Sequence[str] | None = None, chat: type[Chat] = Chat) -> int:
    """Run the chat front end; returns the exit status."""
    args = parse_arguments(argv)
    try:
        return asyncio.run(chat(args).run())
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
