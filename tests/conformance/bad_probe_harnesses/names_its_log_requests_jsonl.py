"""The reference chat, with its session log named ``requests.jsonl``: the
name ``reqfold probe --keep`` gives the captured requests. Nothing is wrong
with the harness; what ``--keep`` keeps must still be both files, whole."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reqfold.reference.revisions import Revision
from reqfold.reference.session_log import SessionLog
from reqfold.reference.shells.chat import Chat, main
from reqfold.reference.shells.jsonl import JsonlWriter, make_storage_line


class NamesItsLogRequestsJsonl(Chat):
    def open_log(self) -> tuple[Any, Any, Revision, Path]:
        revision = Revision(self.args.revision)
        path = self.args.log_dir / "requests.jsonl"
        self.args.log_dir.mkdir(parents=True, exist_ok=True)
        storage = make_storage_line("requests-named", 0, revision=revision.value)
        return (
            SessionLog(revision=revision),
            JsonlWriter.create(path, storage),
            revision,
            path,
        )


raise SystemExit(main(chat=NamesItsLogRequestsJsonl))
