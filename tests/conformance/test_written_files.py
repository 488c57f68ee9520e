"""`write_whole`: a file the user named is there whole or not changed."""

from __future__ import annotations

import errno
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from processes import run_with_small_files

from reqfold.conformance import written_files
from reqfold.conformance.written_files import write_whole

ROOT = Path(__file__).resolve().parents[2]


def test_a_file_is_replaced_whole_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_bytes(b"OLD")
    write_whole(target, b"NEW")
    assert target.read_bytes() == b"NEW"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_link_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    (tmp_path / "real.json").write_bytes(b"OLD")
    link = tmp_path / "report.json"
    link.symlink_to("real.json")
    write_whole(link, b"NEW")
    assert link.is_symlink()
    assert (tmp_path / "real.json").read_bytes() == b"NEW"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["real.json", "report.json"]


def test_a_pipe_is_written_through_and_stays_a_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, at once
    try:
        write_whole(fifo, b"NEW")
        assert os.read(reader, 100) == b"NEW"
    finally:
        os.close(reader)
    assert fifo.is_fifo()


def test_a_pipe_no_one_reads_is_an_error_not_a_wait(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="No such device or address") as caught:
        write_whole(fifo, b"NEW")
    assert caught.value.errno == errno.ENXIO
    assert fifo.is_fifo()


def test_a_writable_file_in_a_folder_that_is_not_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as root every folder is writable: the temporary file's refusal is faked
    target = tmp_path / "report.json"
    target.write_bytes(b"OLD")

    def no_temporary_files(*args: Any, **kwargs: Any) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(written_files.tempfile, "mkstemp", no_temporary_files)
    write_whole(target, b"NEW")
    assert target.read_bytes() == b"NEW"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


def test_a_link_planted_where_a_temporary_file_could_go_is_not_followed(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"VICTIM")
    target = tmp_path / "report.json"
    for guess in (f"report.json.{os.getpid()}.tmp", ".report.json.tmp"):
        (tmp_path / guess).symlink_to(victim)
    write_whole(target, b"NEW")
    assert victim.read_bytes() == b"VICTIM"
    assert target.read_bytes() == b"NEW"
    assert not target.is_symlink()


def test_a_replaced_file_keeps_its_mode_and_a_new_one_gets_opens(
    tmp_path: Path,
) -> None:
    kept = tmp_path / "kept.json"
    kept.write_bytes(b"OLD")
    kept.chmod(0o640)
    write_whole(kept, b"NEW")
    assert kept.stat().st_mode & 0o777 == 0o640
    new = tmp_path / "new.json"
    write_whole(new, b"NEW")
    opened = tmp_path / "opened.json"
    opened.write_bytes(b"")  # as `open` makes a file, under this umask
    assert new.stat().st_mode & 0o777 == opened.stat().st_mode & 0o777


def test_a_folder_in_the_way_raises_and_leaves_no_temporary_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "report.json").mkdir()
    with pytest.raises(IsADirectoryError):
        write_whole(tmp_path / "report.json", b"NEW")
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


@pytest.mark.slow
def test_a_write_that_fails_half_way_leaves_the_old_file_whole(tmp_path: Path) -> None:
    # RLIMIT_FSIZE in a child process stands in for a full disk
    target = tmp_path / "report.json"
    target.write_bytes(b"OLD")

    script = (
        "import sys\n"
        "from reqfold.conformance.written_files import write_whole\n"
        "try:\n"
        "    write_whole(sys.argv[1], b'x' * 100_000)\n"
        "except OSError as error:\n"
        "    print(error.strerror)\n"
    )
    done = run_with_small_files([sys.executable, "-c", script, str(target)], 4096)
    assert done.stdout == "File too large\n", done.stderr
    assert target.read_bytes() == b"OLD"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]


WRITE_BETWEEN_TWO_LINES = """
import sys
from reqfold.conformance.written_files import write_whole
print("before", flush=True)
write_whole(sys.argv[1], b"REPORT\\n")
print("after", flush=True)
"""


@pytest.mark.parametrize("named", ["/dev/stdout", "the file itself"])
def test_a_report_to_stdout_appended_to_a_file_keeps_what_the_file_held(
    tmp_path: Path, named: str
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    target = "/dev/stdout" if named == "/dev/stdout" else str(summary)
    with summary.open("ab") as appended:
        done = subprocess.run(
            [sys.executable, "-c", WRITE_BETWEEN_TWO_LINES, target],
            stdout=appended,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert summary.read_text() == "earlier step\nbefore\nREPORT\nafter\n"


def test_a_descriptor_under_dev_fd_at_a_regular_file_is_appended_to(
    tmp_path: Path,
) -> None:
    held = tmp_path / "held.md"
    held.write_bytes(b"earlier\n")
    descriptor = os.open(held, os.O_WRONLY | os.O_APPEND)
    try:
        write_whole(f"/dev/fd/{descriptor}", b"REPORT\n")
    finally:
        os.close(descriptor)
    assert held.read_bytes() == b"earlier\nREPORT\n"


@pytest.mark.slow
def test_reqfold_run_with_its_markdown_report_on_stdout_appends_to_a_step_summary(
    tmp_path: Path,
) -> None:
    summary = tmp_path / "step-summary.md"
    summary.write_text("## an earlier step\n")
    command = (
        f"{shlex.quote(sys.executable)} -m reqfold.conformance.cli"
        " run --quiet --only scenarios"
        " --scenario plain-turns --report-md /dev/stdout"
        f" >> {shlex.quote(str(summary))}"
    )
    done = subprocess.run(
        ["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    held = summary.read_text()
    assert held.startswith("## an earlier step\n")
    assert "plain-turns" in held
    assert held.count("## an earlier step") == 1
