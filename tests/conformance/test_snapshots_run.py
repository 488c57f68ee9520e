"""``reqfold run --snapshot-dir``: real runs against real harness processes.

The reference writes snapshots, matches them again (in process and as a
child process), and a harness that changes one word of the system prompt,
still conformant, is reported as drift without changing the verdict,
fails the run only with ``--snapshot-strict``, and is accepted by
``--snapshot-update``. Each run plays one scenario under one revision.
``reqfold run`` itself runs in the test's process (the harnesses are real
child processes, the fake provider serves on 127.0.0.1); a bad option's
exit 2 is also shown through a child ``reqfold`` process.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import commands
import pytest
from cli_in_process import reqfold_here

DRIFT = Path(__file__).parent / "drift_harnesses"
REWORDS = f"{sys.executable} {DRIFT / 'rewords_the_system_prompt.py'}"
REFERENCE = f"{sys.executable} -m reqfold.reference.harness_adapter"
ONE_RUN = ("--only", "scenarios", "--scenario", "plain-turns")
NAME = "plain-turns@session-prefix"


reqfold = partial(reqfold_here, "run")
"""``reqfold run ARGS`` in this process (a harness named by ``--impl`` is
still a child process): exit status, stdout, stderr."""

reqfold_child = partial(commands.reqfold, "run", timeout=60)
"""``reqfold run ARGS`` as a child process: exit status, stdout, stderr."""


def snapshots_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("Snapshots in ")]
    return line


@pytest.mark.slow
def test_a_reworded_system_prompt_is_drift_until_snapshot_update_accepts_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "snapshots"
    snap = ("--snapshot-dir", str(folder), *ONE_RUN, "--revision", "session-prefix")

    status, out, err = reqfold("--impl", "reference", *snap)
    assert status == 0, out + err
    assert snapshots_line(out) == f"Snapshots in {folder}: 1 new"
    assert [p.name for p in folder.iterdir()] == [f"{NAME}.ambr"]
    stored = (folder / f"{NAME}.ambr").read_text(encoding="utf-8")
    assert "You answer questions about a small key-value store." in stored

    # The reference as a child process behaves as it did in process.
    status, out, err = reqfold("--impl", REFERENCE, *snap, "--snapshot-strict")
    assert status == 0, out + err
    assert snapshots_line(out) == f"Snapshots in {folder}: 1 same"

    # One word changed: still conformant, and reported as drift.
    status, out, err = reqfold("--impl", REWORDS, *snap)
    assert status == 0, out + err
    assert "Verdict: CONFORMANT" in out
    assert snapshots_line(out) == f"Snapshots in {folder}: 1 drift"
    assert f"  DRIFT    {NAME}: first change at log[4].data.header.system (line" in out
    assert "-             You answer questions about a small key-value store." in out
    assert "+             You answer questions about a tiny key-value store." in out
    assert "requests[0].body.messages[0].content" in out
    assert "Drift is not a verdict: --snapshot-update accepts it." in out
    assert (folder / f"{NAME}.ambr").read_text(encoding="utf-8") == stored

    status, out, _ = reqfold("--impl", REWORDS, *snap, "--snapshot-strict")
    assert status == 1
    assert "Verdict: CONFORMANT" in out
    assert "--snapshot-strict: a run that is otherwise conformant exits 1" in out

    status, out, err = reqfold("--impl", REWORDS, *snap, "--snapshot-update")
    assert status == 0, out + err
    assert snapshots_line(out) == f"Snapshots in {folder}: 1 updated"
    assert "tiny key-value store" in (folder / f"{NAME}.ambr").read_text()

    status, out, err = reqfold("--impl", REWORDS, *snap, "--snapshot-strict")
    assert status == 0, out + err
    assert snapshots_line(out) == f"Snapshots in {folder}: 1 same"

    # A run of another revision leaves the first snapshot alone, and says so.
    other = ("--snapshot-dir", str(folder), *ONE_RUN, "--revision", "header-events")
    status, out, err = reqfold("--impl", "reference", *other)
    assert status == 0, out + err
    assert snapshots_line(out) == (
        f"Snapshots in {folder}: 1 new (1 stored snapshot(s) not compared in this run)"
    )


@pytest.mark.slow
def test_a_broken_snapshot_file_is_reported_and_fails_only_a_strict_run(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "snapshots"
    folder.mkdir()
    (folder / f"{NAME}.ambr").write_text("not a snapshot\n", encoding="utf-8")
    snap = ("--snapshot-dir", str(folder), *ONE_RUN, "--revision", "session-prefix")
    status, out, err = reqfold("--impl", "reference", *snap)
    assert status == 0, out + err
    assert f"  ERROR    {NAME}: the stored snapshot cannot be read" in out
    assert "Traceback" not in out + err
    status, _, _ = reqfold("--impl", "reference", *snap, "--snapshot-strict")
    assert status == 1
    assert (folder / f"{NAME}.ambr").read_text() == "not a snapshot\n"


@pytest.mark.parametrize(
    ("args", "complaint"),
    [
        (("--snapshot-dir", __file__), "is not a folder"),
        (("--snapshot-dir", f"{__file__}/inside"), "cannot be written"),
        (("--snapshot-dir", ""), "--snapshot-dir is empty"),
        (("--snapshot-update",), "--snapshot-update needs --snapshot-dir"),
        (("--snapshot-strict",), "--snapshot-strict needs --snapshot-dir"),
    ],
)
def test_bad_snapshot_options_exit_2_with_a_one_line_reason(
    args: tuple[str, ...], complaint: str
) -> None:
    status, out, err = reqfold(*args, *ONE_RUN)
    assert status == 2
    assert "Traceback" not in out + err
    reason = [line for line in err.splitlines() if complaint in line]
    assert len(reason) == 1
    assert reason[0].startswith("reqfold run: --snapshot-")


def test_a_folder_no_one_may_write_exits_2(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        probe = folder / "probe"
        try:
            probe.write_text("x")
        except PermissionError:
            target = folder  # permissions hold: an ordinary user
        else:
            probe.unlink()
            target = Path("/sys")  # root ignores permissions: a read-only mount
        status, out, err = reqfold_child("--snapshot-dir", str(target), *ONE_RUN)
    finally:
        folder.chmod(0o700)
    assert status == 2
    assert f"reqfold run: --snapshot-dir {str(target)!r} cannot be written:" in err
    assert "Traceback" not in out + err


def test_snapshot_options_on_a_run_without_scenarios_say_nothing_was_kept(
    tmp_path: Path,
) -> None:
    status, out, err = reqfold(
        *("--impl", "reference", "--only", "vectors"),
        *("--revision", "session-prefix", "--snapshot-dir", str(tmp_path / "snaps")),
    )
    assert status == 0, out + err
    assert "note: --snapshot-dir: no scenario ran" in out
