"""The syrupy extension both `reqfold run --snapshot-dir` and the project's
golden tests store snapshots with.

syrupy's Amber serializer writes data as indented text, one member or item
per line, so a change shows as a few changed lines; but it sorts dict keys,
and member order is part of what a harness sends (JSON-3). `OrderedAmber`
keeps them in order, and `SessionSnapshotExtension` stores each snapshot in
a file of its own (``NAME.ambr``) with it. The serializer's version line
(``# serializer version: reqfold-1``) marks files written otherwise: syrupy
reads them as stale, never as a match.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from syrupy.extensions.amber.serializer import AmberDataSerializer
from syrupy.extensions.single_file import SingleFileAmberSnapshotExtension

if TYPE_CHECKING:
    from syrupy.data import SnapshotCollection
    from syrupy.types import (
        PropertyFilter,
        PropertyMatcher,
        PropertyPath,
        SerializableData,
        SerializedData,
    )


class OrderedAmber(AmberDataSerializer):
    """Amber with dict members in insertion order instead of sorted, and each
    key on its one line (Amber writes a key holding a line break as a
    multi-line string; here it is always its ``repr``)."""

    VERSION = "reqfold-1"

    @classmethod
    def serialize_dict(
        cls,
        data: dict[Any, SerializableData],
        *,
        depth: int = 0,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
        path: PropertyPath = (),
        visited: set[Any] | None = None,
    ) -> str:
        members = {
            repr(key) if isinstance(key, str) else key: value
            for key, value in data.items()
        }
        return cls.serialize_custom_iterable(
            data=members,
            resolve_entries=(list(members), _item, None),
            open_paren="{",
            close_paren="}",
            separator=": ",
            depth=depth,
            exclude=exclude,
            include=include,
            matcher=matcher,
            path=path,
            visited=visited,
        )


def _item(data: Any, key: Any) -> Any:
    return data[key]


class SessionSnapshotExtension(SingleFileAmberSnapshotExtension):
    """One ``.ambr`` file per snapshot, serialized by `OrderedAmber`."""

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        return OrderedAmber.serialize(
            data, exclude=exclude, include=include, matcher=matcher
        )

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> SerializableData | None:
        """The stored text, or None when there is none.

        Raises syrupy's ``TaintedSnapshotError`` for a file another
        serializer version wrote (its ``snapshot_data`` is the old text) or
        one with no snapshot in it (``snapshot_data`` None), and
        ``MalformedAmberFile`` for a file that is not Amber.
        """
        from syrupy.exceptions import TaintedSnapshotError

        collection = OrderedAmber.read_file(snapshot_location)
        snapshot = next(iter(collection), None) if collection.has_snapshots else None
        if collection.tainted or (snapshot is not None and snapshot.tainted):
            # A file with no snapshot in it is tainted too: never overwritten
            # as if it were missing.
            data = snapshot.data if snapshot is not None else None
            raise TaintedSnapshotError(snapshot_data=data)
        return snapshot.data if snapshot is not None else None

    @classmethod
    def write_snapshot_collection(
        cls,
        *,
        snapshot_collection: SnapshotCollection,
        name_order: dict[str, int] | None = None,
    ) -> None:
        # One file holds one snapshot, written by one process: no merge, so
        # no lock (under pytest-xdist syrupy would lock and leave a
        # ``.tmp.lock`` file beside every snapshot).
        OrderedAmber.write_file(snapshot_collection, merge=False, file_lock=False)
