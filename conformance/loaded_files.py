"""What was loaded from a folder, given again while its files are unchanged.

The vectors and the scenarios are asked for more than once in a process
(the pytest plugin plans, then collects; a run plans, then reports).
Parsing and checking them costs a hundred times reading their bytes, so
`LoadedFiles` keeps the last result of each folder with the bytes it came
from, and gives it again (as a new list of the same, shared, items) while
every file holds those bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Generic, TypeVar

Item = TypeVar("Item")

FileBytes = tuple[tuple[Path, bytes], ...]
"""Each file a result came from, with what decides whether it changed."""


class LoadedFiles(Generic[Item]):
    """The last result loaded from each folder, keyed by its files' bytes."""

    def __init__(self) -> None:
        self._loaded: dict[Path, tuple[FileBytes, tuple[Item, ...]]] = {}

    def get(
        self,
        folder: Path,
        files: Callable[[], FileBytes],
        load: Callable[[], Sequence[Item]],
    ) -> list[Item]:
        """The items `load` gave when `folder` last held `files()`, else
        `load()`'s; `load()`'s alone, uncached, when `folder` or a file
        cannot be read or resolved (a symlink loop): `load` says how."""
        try:
            key, held = folder.resolve(), files()
        except (OSError, RuntimeError):
            return list(load())
        known = self._loaded.get(key)
        if known is not None and known[0] == held:
            return list(known[1])
        items = list(load())
        self._loaded[key] = (held, tuple(items))
        return items


def file_bytes(paths: Iterable[Path]) -> FileBytes:
    """Each of `paths` with its bytes."""
    return tuple((path, path.read_bytes()) for path in paths)
