"""The working folder the probe creates, owns and runs the harness in.

A small git repository (one file, one commit) so that a harness that reads
its folder tree or git status into its opening shows it, and so the
``workspace`` perturbation can change both between two processes: a file
added and a commit made. Without git on the machine the folder is a plain
one and the probe says so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

README = "# probe project\n\nA small project reqfold probe created for the harness.\n"
ADDED = "notes.md"
"""The file the workspace perturbation adds."""

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "reqfold probe",
    "GIT_AUTHOR_EMAIL": "probe@reqfold.invalid",
    "GIT_COMMITTER_NAME": "reqfold probe",
    "GIT_COMMITTER_EMAIL": "probe@reqfold.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}


def _git(folder: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=folder,
        env=_GIT_ENV,
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def has_git() -> bool:
    """Whether git is on this machine."""
    return shutil.which("git") is not None


def create_workdir(folder: Path) -> str | None:
    """Make the working folder; returns a note when it is not a git repository."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "README.md").write_text(README, encoding="utf-8")
    if not has_git():
        return "git is not installed: the working folder is not a git repository"
    _git(folder, "init", "-q")
    _git(folder, "add", "README.md")
    _git(folder, "commit", "-q", "-m", "A project for the probe")
    return None


def change_workspace(folder: Path) -> str:
    """Add a file and (in a git repository) commit it plus an unstaged edit;
    returns what was done, for the report."""
    (folder / ADDED).write_text("# notes\n\nAdded between two processes.\n")
    if not (folder / ".git").is_dir():
        return f"added {ADDED}"
    _git(folder, "add", ADDED)
    _git(folder, "commit", "-q", "-m", "Notes added between two processes")
    with (folder / "README.md").open("a", encoding="utf-8") as readme:
        readme.write("\nEdited between two processes (not committed).\n")
    return f"added and committed {ADDED}, left README.md edited"
