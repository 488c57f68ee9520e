"""The `reqfold` entry point and `reqfold demo`.

``--version`` and a folder given as the demo's log run ``reqfold`` as a
child process, as a shell does; the other cases call it in the test's
process (`cli_in_process`), which saves a child's start-up (0.3 s of CPU).
"""

from __future__ import annotations

import errno
import importlib.metadata
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from commands import reqfold
from processes import run_with_small_files

from reqfold.conformance import demo

ROOT = Path(__file__).resolve().parents[2]
LONG_WAIT = 300
"""Seconds a child may take to answer a signal: a bound that only a hung
child reaches, however loaded the machine (the tests wait on events, not on
it)."""
VALID_LOG = ROOT / "tests" / "conformance" / "check_fixtures" / "valid"


@pytest.mark.slow
def test_reqfold_version_prints_the_version_and_exits_0() -> None:
    status, out, err = reqfold("--version")
    assert status == 0
    assert out == f"reqfold {importlib.metadata.version('reqfold')}\n"
    assert err == ""


@pytest.mark.parametrize(
    ("args", "said"),
    [
        pytest.param(
            (),
            "reqfold: error: give a command:"
            " check, compare, demo, fake, probe, run, vectors\n"
            "see 'reqfold --help'\n",
            id="reqfold",
        ),
        pytest.param(
            ("fake",),
            "reqfold fake: error: give an action: serve\nsee 'reqfold fake --help'\n",
            id="reqfold fake",
        ),
    ],
)
def test_a_command_with_nothing_to_do_names_what_it_can_do_in_one_line_and_exits_2(
    args: tuple[str, ...], said: str
) -> None:
    status, out, err = reqfold_here(*args)
    assert (status, out, err) == (2, "", said)


@pytest.mark.parametrize(
    "command",
    [
        (),
        ("check",),
        ("compare",),
        ("demo",),
        ("fake",),
        ("fake", "serve"),
        ("probe",),
        ("run",),
        ("vectors",),
    ],
)
def test_every_help_ends_with_where_its_docs_are_and_the_page_is_there(
    command: tuple[str, ...],
) -> None:
    status, out, _ = reqfold_here(*command, "--help")
    assert status == 0
    where, also = out.split("\ndocs: ", 1)[1].splitlines()
    page = Path(where)
    assert page.is_file(), where
    assert page.read_text(encoding="utf-8").startswith("# ")
    assert also == f"(also docs/{page.name} in the repository)"


def test_list_scenarios_into_a_reader_that_goes_away_is_quiet() -> None:
    done = subprocess.run(
        f"{sys.executable} -m reqfold.conformance.cli run --list-scenarios | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    "command", ["check", "vectors", "run", "demo", "fake", "fake serve"]
)
def test_an_unknown_option_after_a_subcommand_is_said_by_that_subcommand(
    command: str,
) -> None:
    log = str(next(VALID_LOG.glob("*.jsonl")))
    words = command.split()
    args = (*words, log, "--bogus") if command == "check" else (*words, "--bogus")
    status, out, err = reqfold_here(*args)
    assert status == 2
    assert out == ""
    error, see = err.splitlines()
    assert error.startswith(f"reqfold {command}: error: ")
    assert see == f"see 'reqfold {command} --help'"
    assert "--bogus" in err or "required" in err


@pytest.mark.slow
def test_demo_with_a_folder_as_the_log_exits_2_and_writes_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    status, out, err = reqfold("demo", "--log", "logs", cwd=tmp_path)
    assert status == 2
    assert err == "reqfold demo: --log 'logs' is a folder: give the path of a file\n"
    assert "Traceback" not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs"]
    assert list(folder.iterdir()) == []


@pytest.mark.slow
def test_demo_with_a_folder_as_the_requests_file_exits_2_before_running(
    tmp_path: Path,
) -> None:
    (tmp_path / "requests").mkdir()
    status, out, err = reqfold_here(
        "demo", "--log", "s.jsonl", "--requests", "requests", cwd=tmp_path
    )
    assert status == 2
    assert "--requests 'requests' is a folder" in err
    assert out == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["requests"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("log", "said"),
    [
        ("", "argument --log: is empty: give the path of a file"),
        (
            "f.txt/s.jsonl",
            "--log 'f.txt/s.jsonl': '{tmp}/f.txt' is a file, not a folder",
        ),
        (
            "missing/s.jsonl",
            "--log 'missing/s.jsonl': the folder 'missing' does not exist",
        ),
    ],
)
def test_demo_with_a_log_path_that_cannot_be_a_file_says_why_in_one_line(
    log: str, said: str, tmp_path: Path
) -> None:
    (tmp_path / "f.txt").write_text("a file\n")
    status, out, err = reqfold_here("demo", "--log", log, cwd=tmp_path)
    assert status == 2
    assert out == ""
    assert said.format(tmp=tmp_path) in err
    assert len(err.strip().splitlines()) <= 3  # usage and the error at most
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


@pytest.mark.slow
def test_demo_whose_reader_went_away_still_writes_its_files_quietly(
    tmp_path: Path,
) -> None:
    # stdout is a pipe whose reader is gone before the demo writes (``| head``)
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "reqfold.conformance.cli", "demo", *DEMO_OUTPUTS],
            cwd=tmp_path,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert (tmp_path / "s.jsonl").read_text().startswith('{"type":"session"')
    assert len((tmp_path / "r.jsonl").read_text().splitlines()) == 7


@pytest.mark.slow
def test_demo_through_a_dangling_link_makes_the_file_it_names_and_keeps_the_link(
    tmp_path: Path,
) -> None:
    (tmp_path / "s.jsonl").symlink_to("logs/s.jsonl")  # logs/ does not exist yet
    status, out, err = reqfold_here("demo", "--log", "s.jsonl", cwd=tmp_path)
    assert status == 0, out + err
    assert (tmp_path / "s.jsonl").is_symlink()
    assert (tmp_path / "logs" / "s.jsonl").read_text().startswith('{"type"')


@pytest.mark.slow
def test_demo_into_a_folder_it_cannot_write_exits_2_before_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # as root every folder is writable: the folder's refusal is faked
    real_access = os.access
    folder = str(tmp_path / "ro")
    (tmp_path / "ro").mkdir()
    monkeypatch.setattr(
        os, "access", lambda path, mode: str(path) != folder and real_access(path, mode)
    )
    status, out, err = reqfold_here("demo", "--log", "ro/s.jsonl", cwd=tmp_path)
    assert status == 2
    assert out == ""
    assert err == (
        f"reqfold demo: --log 'ro/s.jsonl': its folder {folder!r} is not writable\n"
    )


@pytest.mark.slow
def test_demo_names_the_users_file_when_its_stand_in_cannot_be_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the demo runs in this process: writing its stand-in for s.jsonl fails
    def refused(path: Path, **_: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", f"{path}.1.tmp")

    monkeypatch.setattr(demo, "create_session_file", refused)
    status, out, err = reqfold_here("demo", "--log", "s.jsonl", cwd=tmp_path)
    assert status == 2
    assert "Traceback" not in out
    assert err == "reqfold demo: cannot write s.jsonl: No space left on device\n"
    assert list(tmp_path.iterdir()) == []  # the stand-in is removed


@pytest.mark.slow
def test_demo_stand_ins_have_names_no_one_can_guess(tmp_path: Path) -> None:
    # a link planted where a stand-in named after the pid would go is left
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM\n")
    (tmp_path / f"s.jsonl.{os.getpid()}.demo").symlink_to(victim)
    status, out, err = reqfold_here("demo", "--log", "s.jsonl", cwd=tmp_path)
    assert status == 0, out + err
    assert victim.read_text() == "VICTIM\n"
    assert (tmp_path / "s.jsonl").read_text().startswith('{"type":"session"')


@pytest.mark.slow
def test_demo_with_one_file_for_log_and_requests_exits_2_before_running(
    tmp_path: Path,
) -> None:
    (tmp_path / "s.jsonl").write_text("OLD\n")
    status, out, err = reqfold_here(
        "demo", "--log", "s.jsonl", "--requests", "./s.jsonl", cwd=tmp_path
    )
    assert status == 2
    assert err == (
        "reqfold demo: --requests 's.jsonl' is the file --log names: give another\n"
    )
    assert out == ""
    assert (tmp_path / "s.jsonl").read_text() == "OLD\n"


@pytest.mark.slow
def test_demo_with_a_pipe_as_the_log_exits_2_and_leaves_the_pipe(
    tmp_path: Path,
) -> None:
    os.mkfifo(tmp_path / "pipe")
    status, out, err = reqfold_here("demo", "--log", "pipe", cwd=tmp_path)
    assert status == 2
    assert out == ""
    assert err == (
        "reqfold demo: --log 'pipe' is not a regular file: give the path of one\n"
    )
    assert (tmp_path / "pipe").is_fifo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


@pytest.mark.slow
def test_demo_through_links_writes_the_files_they_name_and_keeps_the_links(
    tmp_path: Path,
) -> None:
    for name in ("log", "requests"):
        (tmp_path / f"{name}.target").write_text("OLD\n")
        (tmp_path / f"{name}.jsonl").symlink_to(f"{name}.target")
    status, out, err = reqfold_here(
        "demo", "--log", "log.jsonl", "--requests", "requests.jsonl", cwd=tmp_path
    )
    assert status == 0, out + err
    assert (tmp_path / "log.jsonl").is_symlink()
    assert (tmp_path / "requests.jsonl").is_symlink()
    assert (tmp_path / "log.target").read_text().startswith('{"type":"session"')
    assert len((tmp_path / "requests.target").read_text().splitlines()) == 7
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "log.jsonl",
        "log.target",
        "requests.jsonl",
        "requests.target",
    ]


DEMO_OUTPUTS = ("--log", "s.jsonl", "--requests", "r.jsonl")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("limit", "failing"), [(2048, "s.jsonl"), (8192, "s.jsonl"), (12288, "r.jsonl")]
)
def test_demo_whose_files_cannot_be_written_whole_exits_2_and_leaves_the_old_ones(
    tmp_path: Path, limit: int, failing: str
) -> None:
    # RLIMIT_FSIZE stands in for a full disk: 2 KiB fails at the log's first
    # header event, 8 KiB in the middle of the session, 12 KiB in the requests
    for name in ("s.jsonl", "r.jsonl"):
        (tmp_path / name).write_text("OLD\n")

    done = run_with_small_files(
        [sys.executable, "-m", "reqfold.conformance.cli", "demo", *DEMO_OUTPUTS],
        limit,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == f"reqfold demo: cannot write {failing}: File too large\n"
    assert (tmp_path / "s.jsonl").read_text() == "OLD\n"
    assert (tmp_path / "r.jsonl").read_text() == "OLD\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl", "s.jsonl"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("check", "reqfold check: interrupted; no verdict"),
        ("compare", "reqfold compare: interrupted"),
    ],
)
def test_ctrl_c_in_a_command_without_signal_handling_is_one_line_and_130(
    command: str, said: str, tmp_path: Path
) -> None:
    # The command reads a FIFO: opening its other end returns once the
    # command has opened it, so the interrupt lands inside `main`, not in
    # the interpreter's start-up.
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    argv = [sys.executable, "-m", "reqfold.conformance.cli", command, str(fifo)]
    if command == "compare":
        argv.append(str(fifo))
    child = subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    writers: list[int] = []
    opener = threading.Thread(
        target=lambda: writers.append(os.open(fifo, os.O_WRONLY)), daemon=True
    )

    def release_the_opener_when_the_child_ends() -> None:
        # a child that ends before opening its input must not leave the
        # opener blocked: opening the FIFO's read end lets it return
        child.wait()
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))

    watcher = threading.Thread(target=release_the_opener_when_the_child_ends)
    opener.start()
    watcher.start()
    try:
        opener.join()  # the event: the command opened its input (or ended)
        if child.poll() is not None:
            pytest.fail(f"{command} ended before reading: {child.communicate()}")
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=LONG_WAIT)
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()  # reaped, its pipes closed, whatever happened
        watcher.join()
        for writer in writers:
            os.close(writer)
    assert child.returncode == 130
    assert "Traceback" not in err
    assert err == said + "\n"
    assert out == ""
