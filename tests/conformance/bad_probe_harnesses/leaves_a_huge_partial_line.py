"""The reference chat, which on its way out leaves a partial last line of
MIB mebibytes in its log (the trace of a crash in the middle of a huge
write), ``MIB`` from the environment variable ``REQFOLD_PARTIAL_MIB``. Read
whole, a 1 GB partial line took the probe to gigabytes of memory: it must
be read in bounded memory, and judged as the torn tail it is."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from reqfold.reference.revisions import Revision
from reqfold.reference.shells.chat import Chat, main

MIB = int(os.environ.get("REQFOLD_PARTIAL_MIB", "96"))


class LeavesAHugePartialLine(Chat):
    def open_log(self) -> tuple[Any, Any, Revision, Path]:
        opened = super().open_log()
        self.log_path = opened[3]
        return opened

    async def run(self) -> int:
        status = await super().run()
        tear(self.log_path)
        return status


def tear(path: Path) -> None:
    """Append MIB mebibytes and no newline: the line stays partial."""
    with open(path, "ab") as log:
        for _ in range(MIB):
            log.write(b"x" * (1 << 20))


raise SystemExit(main(chat=LeavesAHugePartialLine))
