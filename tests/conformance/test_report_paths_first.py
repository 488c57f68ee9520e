"""A report that cannot be written is refused before the run, found by
opening it for writing: nothing is truncated, made or left behind."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.written_files import NO_READER, why_not_writable

NOTES = Path("/sys/kernel/notes")
"""A file of /sys no one may write, root included (access() says root may)."""


def _run(*reports: str) -> tuple[int, str, str]:
    return reqfold_here("run", "--only", "vectors", *reports, limit=60)


def test_a_pipe_no_process_reads_is_refused_before_the_run(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    code, out, err = _run("--junit", str(pipe))
    assert code == 2
    assert err.strip().splitlines() == [
        f"reqfold run: --junit {str(pipe)!r} cannot be written: {NO_READER}"
    ]
    assert "Verdict" not in out


@pytest.mark.skipif(
    not NOTES.is_file() or why_not_writable(NOTES) is None,
    reason="/sys/kernel/notes is missing or writable here",
)
def test_a_file_the_system_will_not_open_for_writing_is_refused_before_the_run() -> (
    None
):
    code, out, err = _run("--junit", str(NOTES))
    assert code == 2
    assert err.strip().splitlines() == [
        f"reqfold run: --junit {str(NOTES)!r} cannot be written: Permission denied"
    ]
    assert "Verdict" not in out


def test_the_check_truncates_nothing_and_makes_no_file(tmp_path: Path) -> None:
    kept = tmp_path / "old.json"
    kept.write_text("the previous report")
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    new = tmp_path / "new.md"
    # the pipe is checked last (the order of REPORTS), after the new file
    code, _, _ = _run(
        "--report-json", str(kept), "--report-md", str(new), "--report-html", str(pipe)
    )
    assert code == 2
    assert kept.read_text() == "the previous report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.json", "pipe"]


def test_checking_a_file_not_made_yet_leaves_the_folder_as_it_was(
    tmp_path: Path,
) -> None:
    assert why_not_writable(tmp_path / "new.md") is None
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_pipe_that_is_read_gets_the_whole_report_after_the_check(
    tmp_path: Path,
) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    got: list[bytes] = []

    def read_all() -> None:
        # Linux reports a hang-up only once a writer came and went, so the
        # wait starts before the run and ends when the last writer closed
        poller = select.poll()
        poller.register(reader, select.POLLIN)
        try:
            while True:
                poller.poll()
                chunk = os.read(reader, 1 << 16)
                if not chunk:
                    return
                got.append(chunk)
        finally:
            os.close(reader)

    thread = threading.Thread(target=read_all)
    thread.start()
    code, out, err = _run("--junit", str(pipe))
    thread.join(30)
    assert code == 0, out + err
    text = b"".join(got).decode("utf-8")
    assert text.startswith(("<?xml", "<testsuites"))
    assert text.rstrip().endswith("</testsuites>")


def test_a_link_to_a_file_not_made_yet_passes_the_check_and_is_left_a_link(
    tmp_path: Path,
) -> None:
    link = tmp_path / "report.json"
    link.symlink_to("real.json")
    assert why_not_writable(link) is None
    assert link.is_symlink()
    assert not (tmp_path / "real.json").exists()


def test_a_loop_of_links_is_refused_as_a_loop(tmp_path: Path) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to("loop.json")
    assert why_not_writable(loop) == "Too many levels of symbolic links"


SETPRIV = shutil.which("setpriv")
AS_NOBODY = ("--reuid=nobody", "--regid=nogroup", "--clear-groups")


@pytest.mark.skipif(
    SETPRIV is None or os.geteuid() != 0,
    reason="needs setpriv and root to check as user nobody",
)
def test_a_read_only_file_in_a_folder_anyone_may_write_passes_for_another_user() -> (
    None
):
    folder = Path(tempfile.mkdtemp())
    try:
        folder.chmod(0o777)
        read_only = folder / "ro.json"
        read_only.write_text("{}")
        read_only.chmod(0o444)
        check = (
            "from reqfold.conformance.written_files import why_not_writable;"
            f"print(why_not_writable({str(read_only)!r}))"
        )
        done = subprocess.run(
            [str(SETPRIV), *AS_NOBODY, sys.executable, "-c", check],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (done.returncode, done.stdout.strip()) == (0, "None"), done.stderr
        assert sorted(p.name for p in folder.iterdir()) == ["ro.json"]
    finally:
        shutil.rmtree(folder)
