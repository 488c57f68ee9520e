"""A folder of snapshots for ``reqfold run --snapshot-dir``: compare, write, tell.

Each scenario run's snapshot is one file, ``NAME.ambr`` (NAME is
``scenario@revision``), in the format the project's golden tests keep
(`reqfold.conformance.snapshots.extension`). `SnapshotStore.compare` serializes the
data with that extension, reads what the folder holds, and says whether it
is the same, new (then written), drifted (with syrupy's line diff), or
updated (drifted, and rewritten because the user asked). A file that cannot
be read, or a folder that cannot be written, is an error for that snapshot,
never an exception out of the run. Writes go to a temporary file first and
replace the old one in one step, so an interrupted run leaves either.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from syrupy.data import Snapshot, SnapshotCollection
from syrupy.exceptions import TaintedSnapshotError
from syrupy.extensions.amber.serializer import MalformedAmberFile, MissingVersionError
from syrupy.terminal import disable_color

from reqfold.conformance.snapshots.extension import SessionSnapshotExtension
from reqfold.conformance.snapshots.where import changed_members, first_change
from reqfold.reference.json_values import JsonValue

if TYPE_CHECKING:
    from syrupy.types import SerializedData

SUFFIX = ".ambr"

HEADER_LINES = 2
"""The lines an ``.ambr`` file has before its data (version and name)."""


class Status(StrEnum):
    """What comparing one snapshot found."""

    SAME = "same"
    NEW = "new"
    DRIFT = "drift"
    UPDATED = "updated"
    ERROR = "error"


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    """The result of comparing one run's snapshot with the stored one."""

    name: str
    status: Status
    path: Path
    diff: tuple[str, ...] = ()
    """The changed lines, ``-`` stored and ``+`` this run, with context."""
    where: str = ""
    """The first changed member and its line in the file, when it changed."""
    changed: tuple[str, ...] = ()
    """Every changed member (the diff shows only the first few lines)."""
    message: str = ""


def file_name(name: str) -> str:
    """The file a snapshot named `name` is kept in (no separators, no dot start)."""
    return re.sub(r"[^A-Za-z0-9._@-]", "_", name).lstrip(".") + SUFFIX


class SnapshotStore:
    """The snapshots in one folder; `update` rewrites those that drifted."""

    def __init__(self, folder: Path, *, update: bool = False) -> None:
        self.folder = folder
        self.update = update
        self.extension = SessionSnapshotExtension()

    def compare(self, name: str, data: JsonValue) -> Comparison:
        """Compare `data` with the stored snapshot `name`; write it if new."""
        path = self.folder / file_name(name)
        received = self.extension.serialize(data)
        try:
            stored = self.extension.read_snapshot_data_from_location(
                snapshot_location=str(path), snapshot_name=name, session_id=""
            )
        except TaintedSnapshotError as error:
            why = (
                "it holds no snapshot"
                if error.snapshot_data is None
                else "another serializer version wrote it"
            )
            return self._unreadable(name, path, received, why)
        except (MalformedAmberFile, MissingVersionError, UnicodeDecodeError) as error:
            why = str(error) or "it is not a snapshot file"
            return self._unreadable(name, path, received, why)
        except OSError as error:
            return self._unreadable(name, path, received, error.strerror or str(error))
        if stored is None:
            return self._written(name, path, received, Status.NEW)
        if self.extension.matches(serialized_data=received, snapshot_data=stored):
            return Comparison(name=name, status=Status.SAME, path=path)
        with disable_color():
            diff = tuple(self.extension.diff_lines(received, stored))
        where = ""
        found = first_change(str(stored), str(received))
        if found is not None:
            where = f"{found[1]} (line {found[0] + HEADER_LINES} of the file)"
        changed = tuple(changed_members(str(stored), str(received)))
        status = Status.DRIFT
        message = ""
        if self.update:
            written = self._written(name, path, received, Status.UPDATED)
            status, message = written.status, written.message
        return Comparison(
            name=name,
            status=status,
            path=path,
            diff=diff,
            where=where,
            changed=changed,
            message=message,
        )

    def stored_names(self) -> set[str]:
        """The file names of every snapshot the folder holds."""
        try:
            return {
                entry.name
                for entry in self.folder.iterdir()
                if entry.name.endswith(SUFFIX) and entry.is_file()
            }
        except OSError:
            return set()

    def _unreadable(
        self, name: str, path: Path, received: SerializedData, why: str
    ) -> Comparison:
        if self.update:
            return self._written(name, path, received, Status.UPDATED)
        return Comparison(
            name=name,
            status=Status.ERROR,
            path=path,
            message=f"the stored snapshot cannot be read ({why});"
            " --snapshot-update rewrites it",
        )

    def _written(
        self, name: str, path: Path, received: SerializedData, status: Status
    ) -> Comparison:
        """Write `received` as snapshot `name`; `status` when that worked."""
        temporary = path.with_name(f".{path.name}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            collection = SnapshotCollection(location=str(temporary))
            collection.add(Snapshot(name=name, data=received))
            self.extension.write_snapshot_collection(snapshot_collection=collection)
            os.replace(temporary, path)
        except OSError as error:
            with contextlib.suppress(OSError):
                temporary.unlink()
            return Comparison(
                name=name,
                status=Status.ERROR,
                path=path,
                message=f"the snapshot cannot be written: {error.strerror or error}",
            )
        return Comparison(name=name, status=status, path=path)
