"""Not bad, but greedy: the reference chat reading stdin in raw chunks, taking
everything one read returns as ONE prompt (lines joined). Fed two lines
before it reads, it would merge two turns into one; paced by the probe it
sees one line per read, so it must pass with every turn handled. It also
prints a lot (64 KB per turn on stdout and on stderr), which the probe must
drain without stalling it."""

from __future__ import annotations

import asyncio
import os
import sys

from reqfold.reference.shells.chat import Chat, main

NOISE = "chatter " * 8192


class ReadsAhead(Chat):
    async def read_line(self) -> str:
        chunk = await asyncio.to_thread(os.read, 0, 65536)
        sys.stdout.write(NOISE + "\n")
        sys.stderr.write(NOISE + "\n")
        text = chunk.decode("utf-8")
        return " ".join(text.split("\n")).strip() + "\n" if text else ""


raise SystemExit(main(chat=ReadsAhead))
