"""JSONL session files: writing whole lines, telling a torn tail from damage."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from rejections import rejects

from reqfold.reference.errors import (
    LogDamaged,
    MalformedEvent,
    NotJsonValue,
    PersistenceError,
    TornTail,
)
from reqfold.reference.revisions import LATEST, Revision
from reqfold.reference.session_log import make_event
from reqfold.reference.shells.jsonl import (
    JsonlWriter,
    cut_torn_tail,
    load_session_file,
    make_storage_line,
)

STORAGE = make_storage_line("demo-1", 1_700_000_000_000, revision="session-prefix")


NOTE_0 = b'{"type":"note","seq":0,"time":1,"data":{}}\n'


def note(seq: int, **data: object) -> dict:
    return {"type": "note", "seq": seq, "time": 1, "data": dict(data)}


def write(path: Path, count: int) -> None:
    JsonlWriter.create(path, STORAGE, [note(i, i=i) for i in range(count)])


def refused(
    error: PersistenceError, kind: type[PersistenceError], path: Path, line: int | None
) -> None:
    """`error` is exactly `kind`, names `path` and `line`, and explains itself."""
    got = (type(error), error.path, error.line)
    assert got == (kind, str(path), line), f"{got}: {error}"
    assert isinstance(error.detail, str), repr(error)
    assert error.detail.strip(), repr(error)


@pytest.mark.spec("JSONL-1", "JSONL-2")
def test_a_written_file_is_a_storage_line_then_one_event_per_line(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 2)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == (
        '{"type":"session","version":0,"id":"demo-1","createdAt":1700000000000,'
        '"revision":"session-prefix"}'
    )
    assert lines[2] == '{"type":"note","seq":1,"time":1,"data":{"i":1}}'
    loaded = load_session_file(path)
    assert loaded.storage == STORAGE
    assert [e["seq"] for e in loaded.events] == [0, 1]
    assert loaded.torn_tail is None


@pytest.mark.spec("JSONL-5")
def test_appending_continues_the_seqs_and_rejects_a_gap(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 2)
    writer = JsonlWriter.open(path)
    writer.append([note(2)])
    with rejects(MalformedEvent, "LOG-2", seq=9):
        writer.append([note(9)])
    assert len(load_session_file(path).events) == 3


@pytest.mark.spec("JSONL-2", "JSON-1")
def test_an_event_whose_type_is_not_unicode_text_is_refused_before_writing(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 1)
    before = path.read_bytes()
    bad = {**note(1), "type": "note-\ud800"}
    with rejects(NotJsonValue, "JSON-1", seq=1):
        JsonlWriter.open(path).append([bad])
    with rejects(NotJsonValue, "JSON-1", seq=0):
        JsonlWriter.create(tmp_path / "t.jsonl", STORAGE, [{**bad, "seq": 0}])
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


@pytest.mark.spec("JSONL-3", "JSONL-5")
def test_a_torn_final_line_is_reported_kept_aside_and_never_written_after(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 2)
    with path.open("ab") as handle:
        handle.write(b'{"type":"note","seq":2,"ti')
    loaded = load_session_file(path)
    assert [e["seq"] for e in loaded.events] == [0, 1]
    assert loaded.torn_tail is not None
    assert loaded.torn_tail.line == 4
    with pytest.raises(TornTail) as torn:
        JsonlWriter.open(path)
    refused(torn.value, TornTail, path, 4)
    moved = cut_torn_tail(path)
    assert moved is not None
    assert (tmp_path / "s.jsonl.torn").read_bytes() == b'{"type":"note","seq":2,"ti'
    JsonlWriter.open(path).append([note(2)])
    assert len(load_session_file(path).events) == 3


@pytest.mark.spec("JSONL-3")
def test_a_complete_final_line_without_newline_is_kept_and_appending_terminates_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 1)
    with path.open("ab") as handle:
        handle.write(b'{"type":"note","seq":1,"time":1,"data":{}}')
    assert len(load_session_file(path).events) == 2
    JsonlWriter.open(path).append([note(2)])
    assert [e["seq"] for e in load_session_file(path).events] == [0, 1, 2]


@pytest.mark.spec("JSONL-4", "JSON-1")
@pytest.mark.parametrize(
    "bad_line",
    [
        b"{not json",
        b'{"type":"note","seq":1,"time":1,"data":{"x":NaN}}',
        b'{"type":"note","seq":1,"seq":1,"time":1,"data":{}}',
        b'{"type":"note","seq":5,"time":1,"data":{}}',
        b"\xff\xfe",
    ],
    ids=["not-json", "nan", "duplicate-key", "seq-gap", "invalid-utf8"],
)
def test_damage_before_the_last_line_refuses_to_load_and_names_the_line(
    tmp_path: Path, bad_line: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 1)
    with path.open("ab") as handle:
        handle.write(bad_line + b"\n" + b'{"type":"note","seq":2,"time":1,"data":{}}\n')
    with pytest.raises(LogDamaged) as caught:
        load_session_file(path)
    assert (type(caught.value), caught.value.path, caught.value.line) == (
        LogDamaged,
        str(path),
        3,
    )


@pytest.mark.spec("JSONL-1")
@pytest.mark.parametrize(
    "first",
    [
        b"",
        b'{"type":"session","version":1,"id":"x","createdAt":0}\n',
        b'{"type":"note"}\n',
        b'{"type":"session","version":0,"id"',
    ],
    ids=["empty-file", "future-version", "not-a-storage-line", "torn-storage-line"],
)
def test_a_file_without_a_valid_storage_line_is_rejected(
    tmp_path: Path, first: bytes
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(first)
    with pytest.raises(LogDamaged) as caught:
        load_session_file(path)
    refused(caught.value, LogDamaged, path, 1)


def test_a_loaded_file_seeds_a_session_in_its_declared_revision(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 3)
    session = load_session_file(path).session()
    assert len(session) == 3
    assert session.revision.value == "session-prefix"


PARTIAL_WRITE = """
import os, resource, signal, sys
from reqfold.reference.shells.jsonl import (
    JsonlWriter, load_session_file, make_storage_line,
)
from reqfold.reference.session_log import make_event

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
path = sys.argv[1]
writer = JsonlWriter.create(path, make_storage_line("s", 0))
writer.append([make_event("note", 0, 0, {"x": "a"})])
limit = os.path.getsize(path) + 20
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
try:
    writer.append([make_event("note", 1, 0, {"x": "b" * 100})])
except OSError:
    print("refused")
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY,) * 2)
writer.append([make_event("note", 1, 0, {"x": "c"})])
print([event["data"]["x"] for event in load_session_file(path).events])
"""


@pytest.mark.slow
@pytest.mark.spec("JSONL-5", "JSONL-4")
def test_a_partial_append_is_cut_back_so_the_next_append_keeps_the_file_readable(
    tmp_path: Path,
) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", PARTIAL_WRITE, str(tmp_path / "s.jsonl")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.split("\n")[:2] == ["refused", "['a', 'c']"]


@pytest.mark.spec("JSONL-1", "JSON-5")
def test_the_storage_line_reads_integral_floats_and_rejects_bad_optional_members(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"session","version":0,"id":"x","createdAt":1.0}\n')
    assert load_session_file(path).storage["createdAt"] == 1
    for extra in ('"revision":"r9"', '"seedLength":-1', '"cwd":5', '"parentSession":5'):
        path.write_text(
            '{"type":"session","version":0,"id":"x","createdAt":1,' + extra + "}\n"
        )
        with pytest.raises(LogDamaged) as caught:
            load_session_file(path)
        assert caught.value.line == 1


FULL_DISK_CREATE = """
import os, resource, signal, sys
from reqfold.reference.shells.jsonl import (
    JsonlWriter, load_session_file, make_storage_line,
)
from reqfold.reference.session_log import make_event

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
path = sys.argv[1]
JsonlWriter.create(path, make_storage_line("s", 0), [make_event("note", 0, 0, {})])
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
big = [make_event("note", seq, 0, {"x": "b" * 100}) for seq in range(100)]
try:
    JsonlWriter.create(path, make_storage_line("s", 0), big)
except OSError:
    print("refused")
print(sorted(os.listdir(os.path.dirname(path))))
print(len(load_session_file(path).events))
"""


@pytest.mark.slow
def test_a_create_that_fills_the_disk_leaves_the_old_file_whole_and_no_temp_file(
    tmp_path: Path,
) -> None:
    """RLIMIT_FSIZE in a child process stands in for a full disk."""
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", FULL_DISK_CREATE, str(tmp_path / "s.jsonl")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.split("\n")[:3] == ["refused", "['s.jsonl']", "1"]


def test_creating_a_log_where_a_folder_is_refused_and_leaves_no_temp_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as caught:
        JsonlWriter.create(folder, make_storage_line("s", 0))
    assert (caught.value.errno, caught.value.filename) == (errno.EISDIR, str(folder))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"]
    assert list(folder.iterdir()) == []


def test_creating_a_log_through_a_link_replaces_the_file_it_names_and_keeps_the_link(
    tmp_path: Path,
) -> None:
    target = tmp_path / "target.jsonl"
    target.write_text("OLD\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(target.name)
    writer = JsonlWriter.create(link, make_storage_line("s", 0))
    writer.append([make_event("turn/start", 0, 1, {"turn": 1})])
    assert link.is_symlink()
    assert os.readlink(link) == target.name
    assert load_session_file(link).storage["id"] == "s"
    assert len(load_session_file(target).events) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "target.jsonl"]


def test_creating_a_log_where_a_pipe_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    # a rename would replace the pipe (or a device: /dev/stdout as root)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file") as caught:
        JsonlWriter.create(fifo, make_storage_line("s", 0))
    assert (caught.value.errno, caught.value.filename) == (errno.EINVAL, str(fifo))
    assert fifo.is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.spec("JSONL-1")
def test_the_storage_line_holds_each_optional_member_under_its_spec_name(
    tmp_path: Path,
) -> None:
    storage = make_storage_line(
        "s",
        5,
        cwd="/w",
        parent_session="p",
        seed_length=2,
        revision="header-events",
    )
    assert list(storage.items()) == [
        ("type", "session"),
        ("version", 0),
        ("id", "s"),
        ("createdAt", 5),
        ("cwd", "/w"),
        ("parentSession", "p"),
        ("seedLength", 2),
        ("revision", "header-events"),
    ]
    path = tmp_path / "s.jsonl"
    JsonlWriter.create(path, storage)
    assert load_session_file(path).storage == storage


def test_a_loaded_file_without_a_revision_seeds_a_session_in_the_latest(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    JsonlWriter.create(path, make_storage_line("s", 0, revision="header-events"))
    assert load_session_file(path).session().revision is Revision.HEADER_EVENTS
    JsonlWriter.create(path, make_storage_line("s", 0))
    assert load_session_file(path).session().revision is LATEST


@pytest.mark.spec("JSONL-1")
def test_creating_a_file_with_a_bad_storage_line_writes_nothing(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="version"):
        JsonlWriter.create(tmp_path / "s.jsonl", {**STORAGE, "version": 1})
    assert list(tmp_path.iterdir()) == []


def test_reading_a_missing_file_is_refused_naming_the_path(tmp_path: Path) -> None:
    with pytest.raises(PersistenceError) as caught:
        load_session_file(tmp_path / "missing.jsonl")
    refused(caught.value, PersistenceError, tmp_path / "missing.jsonl", None)


def test_creating_a_file_in_a_missing_folder_raises_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    with pytest.raises(FileNotFoundError):
        JsonlWriter.create(tmp_path / "gone" / "s.jsonl", STORAGE)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spec("JSONL-2", "JSONL-5")
def test_one_append_of_several_events_writes_one_line_each(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write(path, 1)
    writer = JsonlWriter.open(path)
    writer.append([note(1, i=1), note(2, i=2)])
    writer.append([note(3)])
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[2:] == [
        '{"type":"note","seq":1,"time":1,"data":{"i":1}}',
        '{"type":"note","seq":2,"time":1,"data":{"i":2}}',
        '{"type":"note","seq":3,"time":1,"data":{}}',
    ]


@pytest.mark.spec("JSONL-2")
def test_text_holding_spaces_tabs_and_non_ascii_reads_back_unchanged(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    events = [note(0, text="two words\tand a tab"), note(1, text="caf\u00e9 \u2603")]
    JsonlWriter.create(path, STORAGE, events[:1])
    JsonlWriter.open(path).append(events[1:])
    assert load_session_file(path).events == events


@pytest.mark.spec("JSONL-4")
@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b'{"type":"note","seq":5,"time":1,"data":{}}\n' + NOTE_0, 2),
        (NOTE_0 + b'{"type":"note","seq":7,"time":1,"data":{}}\n', 3),
        (NOTE_0 + b'{"type":"note","seq":1,"ti\n', 3),
    ],
    ids=["first-event-line", "complete-last-line", "cut-last-line-with-newline"],
)
def test_a_damaged_line_is_damage_wherever_it_is_unless_it_is_a_torn_tail(
    tmp_path: Path, content: bytes, line: int
) -> None:
    # Only a final line without its newline is a torn tail (JSONL-3); a
    # line that ends in a newline was written whole, so wrong is damaged.
    path = tmp_path / "s.jsonl"
    write(path, 0)
    with path.open("ab") as handle:
        handle.write(content)
    with pytest.raises(LogDamaged) as caught:
        load_session_file(path)
    refused(caught.value, LogDamaged, path, line)


def test_appends_are_fsynced_when_asked_and_only_then(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync

    def spy(descriptor: int) -> None:
        synced.append(descriptor)
        real_fsync(descriptor)

    path = tmp_path / "s.jsonl"
    plain = JsonlWriter.create(path, STORAGE)
    monkeypatch.setattr(os, "fsync", spy)
    plain.append([note(0)])
    JsonlWriter.open(path).append([note(1)])
    assert synced == []
    created = JsonlWriter.create(tmp_path / "t.jsonl", STORAGE, fsync=True)
    synced.clear()
    created.append([note(0)])
    JsonlWriter.open(path, fsync=True).append([note(2)])
    assert len(synced) == 2
    assert [e["seq"] for e in load_session_file(path).events] == [0, 1, 2]


ASCII_LOCALE_WRITE = """
import sys
from reqfold.reference.shells.jsonl import JsonlWriter, make_storage_line
from reqfold.reference.session_log import make_event

event = make_event("note", 0, 0, {"x": "caf\\u00e9"})
JsonlWriter.create(sys.argv[1], make_storage_line("s", 0), [event])
"""


@pytest.mark.slow
@pytest.mark.spec("JSONL-2")
def test_a_file_is_written_as_utf8_under_an_ascii_locale(tmp_path: Path) -> None:
    """A child process whose locale encoding is ASCII creates the file."""
    import subprocess
    import sys

    path = tmp_path / "s.jsonl"
    ascii_locale = {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    subprocess.run(
        [sys.executable, "-c", ASCII_LOCALE_WRITE, str(path)],
        env={**os.environ, **ascii_locale},
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert "caf\u00e9".encode() in path.read_bytes()
    assert load_session_file(path).events[0]["data"] == {"x": "caf\u00e9"}


def test_creating_a_file_never_writes_through_a_link_at_a_guessable_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    victim = tmp_path / "victim"
    victim.write_text("keep me\n")
    (tmp_path / f"s.jsonl.{os.getpid()}.tmp").symlink_to(victim)
    write(path, 2)
    assert victim.read_text() == "keep me\n"
    assert len(load_session_file(path).events) == 2


def test_a_created_file_gets_the_mode_open_would_give_or_keeps_its_own(
    tmp_path: Path,
) -> None:
    fresh, existing = tmp_path / "fresh.jsonl", tmp_path / "existing.jsonl"
    existing.write_text("")
    existing.chmod(0o640)
    mask = os.umask(0o022)
    try:
        write(fresh, 1)
        write(existing, 1)
    finally:
        os.umask(mask)
    assert (fresh.stat().st_mode & 0o777, existing.stat().st_mode & 0o777) == (
        0o644,
        0o640,
    )
