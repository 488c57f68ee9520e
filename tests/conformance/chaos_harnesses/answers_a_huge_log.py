"""Writes its session log where the suite asked, but answers ``session/open``
with a file of MIB mebibytes it made beside it: a valid storage line, then
note events of a mebibyte each. ``python answers_a_huge_log.py
MIB``. Read whole, a 1.5 GiB answer took the suite to 3.2 GB of memory:
the suite must check such a log's rules streaming, in bounded memory (this
one is not the session's: CHECK-1 fails)."""

from __future__ import annotations

import json
import sys

from _chaos import serve

from reqfold.reference.json_values import JsonObject
from reqfold.reference.shells.harness_adapter import HarnessServer
from reqfold.reference.shells.jsonl import dump_line, make_storage_line

MIB = int(sys.argv[1])


def write_huge_log(path: str) -> None:
    with open(path, "w", encoding="utf-8") as log:
        log.write(dump_line(make_storage_line("huge", 0, revision="session-prefix")))
        text = "x" * (1 << 20)  # one event per mebibyte
        for seq in range(MIB):
            event = {"type": "note", "seq": seq, "time": 1, "data": {"text": text}}
            log.write(json.dumps(event) + "\n")


class AnswersAHugeLog(HarnessServer):
    async def open_session(self, params: JsonObject) -> JsonObject:
        result = await super().open_session(params)
        huge = f"{result['log']}.huge.jsonl"
        write_huge_log(huge)
        return {"log": huge}


serve(AnswersAHugeLog)
