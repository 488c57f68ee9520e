"""The snapshot options of ``reqfold run``, checked before anything runs.

Kept apart from the recorder so that ``reqfold run`` without
``--snapshot-dir`` never imports syrupy (and pytest with it).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reqfold.conformance.snapshots.recorder import SnapshotRecorder


def usage_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with the snapshot options, in one line, or None.

    Makes the folder when it is missing, and checks it can be written, so a
    bad folder is a usage error before anything runs, not a surprise after.
    """
    folder = getattr(args, "snapshot_dir", None)
    if folder is None:
        for option in ("snapshot_update", "snapshot_strict"):
            if getattr(args, option, False):
                name = "--" + option.replace("_", "-")
                return f"{name} needs --snapshot-dir (the folder of snapshots)"
        return None
    if not str(folder).strip():
        return "--snapshot-dir is empty: give a folder for the snapshots"
    problem = folder_problem(Path(folder))
    return None if problem is None else f"--snapshot-dir {problem}"


def folder_problem(folder: Path) -> str | None:
    """Why snapshots cannot be kept in `folder` (made if missing), or None.

    Writes and removes a probe file: permissions alone do not tell (root
    ignores them; a read-only file system does not).
    """
    if folder.exists() and not folder.is_dir():
        return f"{str(folder)!r} is not a folder"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".reqfold-probe-"):
            pass
    except OSError as error:
        return f"{str(folder)!r} cannot be written: {error.strerror or error}"
    return None


def open_recorder(args: argparse.Namespace) -> SnapshotRecorder | None:
    """The recorder the options ask for, or None without ``--snapshot-dir``."""
    if getattr(args, "snapshot_dir", None) is None:
        return None
    from reqfold.conformance.snapshots.recorder import SnapshotRecorder

    return SnapshotRecorder.from_args(args)
