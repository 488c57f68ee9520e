"""``reqfold probe``'s driver styles, config templates, readiness and
perturbations, on small harnesses in the styles real ones offer.

The harnesses are real child processes (``style_harnesses/tiny_agent.py``:
one process per turn with a continue flag, JSON lines, a config file;
``bad_probe_harnesses/drops_line_before_ready.py``); the fake is a real
uvicorn server on 127.0.0.1 started by the probe. The tiny harness writes
no reqfold session log, so its verdict fails CHECK-3 for that (issue 26
judges such harnesses by their requests alone); these tests read the
driver's own lines and the timeline from the terminal, and each
perturbation's outcome and message from the JSON report (`probe_reports`).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_in_process import reqfold_here
from probe_reports import checks_by_id, read_probe_report

from reqfold.conformance.probe.perturb import faketime_library

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).parent
TINY_PATH = HERE / "style_harnesses" / "tiny_agent.py"
TINY = f"{shlex.quote(sys.executable)} {shlex.quote(str(TINY_PATH))}"
TEMPLATE = str(HERE / "style_harnesses" / "tiny.json.template")
SEND = '{"type": "prompt", "message": "{prompt}"}'

needs_faketime = pytest.mark.skipif(
    faketime_library() is None,
    reason="libfaketime is not installed (Debian package faketime, which .ci/run"
    " installs)",
)


@dataclass(frozen=True)
class Probed:
    """What one probe did: its exit status, both outputs and its JSON
    report (None when it wrote none: refused arguments)."""

    returncode: int
    stdout: str
    stderr: str
    report: dict[str, Any] | None


def probe(*args: str) -> Probed:
    """``reqfold probe ARGS`` in this process (the harness is still a child),
    with its JSON report."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="probe-report-") as folder:
        report = Path(folder) / "probe.json"
        argv = ["probe", "--timeout", "20", "--report-json", str(report), *args]
        status, out, err = reqfold_here(*argv, env={"PYTHONPATH": path})
        found = read_probe_report(report) if report.exists() else None
    return Probed(status, out, err, found)


def per_process(*flags: str) -> list[str]:
    """The tiny harness driven one process per turn, configured by a file."""
    extra = " ".join(flags)
    return [
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn {extra} {{prompt}}",
        "--next-cmd",
        f"{TINY} turn --continue {extra} {{prompt}}",
        "--config-template",
        f"{TEMPLATE}:tiny.json",
    ]


def jsonl(*flags: str) -> list[str]:
    """The tiny harness driven by JSON lines, configured by the environment."""
    return [
        "--drive",
        "jsonl",
        "--cmd",
        f"{TINY} jsonl {' '.join(flags)}",
        "--send",
        SEND,
        "--turn-end",
        "type=agent_end",
        "--base-url-env",
        "TINY_BASE_URL",
        "--api-key-env",
        "TINY_API_KEY",
    ]


def relation(out: str, index: int) -> tuple[str, str]:
    """The process and relation of request `index` in the cache judgement's
    timeline (the probe judges these log-less harnesses from requests)."""
    match = re.search(
        rf"^\s+{index}  (run \d+)\s+\S+\s+\d+\s+\d+\s+\S+\s+\d+  (\w+)", out, re.M
    )
    assert match, out
    return match.group(1), match.group(2)


def perturbation(result: Probed, name: str) -> str:
    """The perturbation's check, ``perturb/NAME``, in the JSON report: its
    status and message."""
    assert result.report is not None, result.stdout + result.stderr
    check = checks_by_id(result.report)[f"perturb/{name}"]
    return f"{check['status']} {check['message']}"


@pytest.mark.spec("CHECK-3")
def test_one_process_per_turn_feeds_each_turn_to_its_own_process_in_order() -> None:
    result = probe(*per_process(), "--show", "all")
    out = result.stdout
    for number in (1, 2, 3):
        assert f"run {number}: 1 of 1 turn(s) fed, 1 handled, 1 request(s);" in out, out
    # each continued process extends the one before: the continue flag worked
    assert relation(out, 1) == ("run 2", "append")
    assert relation(out, 2) == ("run 3", "append")
    assert "in tiny.json" in out


@pytest.mark.spec("CHECK-3")
def test_the_config_template_gets_each_process_its_own_key(tmp_path: Path) -> None:
    result = probe(*per_process(), "--keep", str(tmp_path))
    captures = [
        json.loads(line)
        for line in (tmp_path / "requests.jsonl").read_text().splitlines()
    ]
    assert len(captures) == 3, result.stdout
    assert len({capture["key"] for capture in captures}) == 3


@pytest.mark.spec("CHECK-3")
def test_a_turn_whose_process_fails_stops_the_run_and_says_so() -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn {{prompt}}",
        "--next-cmd",
        f"{TINY} turn --continue",  # no prompt: the harness exits 2
        "--config-template",
        f"{TEMPLATE}:tiny.json",
    )
    assert result.returncode == 1
    assert "run 2: 1 of 1 turn(s) fed, 0 handled" in result.stdout
    assert "the process exited with status 2" in result.stdout


@pytest.mark.spec("CHECK-3")
def test_json_lines_feed_one_turn_per_line_and_end_it_on_the_matching_line() -> None:
    result = probe(*jsonl())
    out = result.stdout
    assert "run 1: 3 of 3 turn(s) fed, 3 handled, 3 request(s)" in out, out
    assert relation(out, 2) == ("run 1", "append")


@pytest.mark.spec("CHECK-3")
def test_json_lines_that_never_match_the_turn_end_are_reported() -> None:
    args = jsonl()
    args[args.index("type=agent_end")] = "type=never"
    result = probe(*args, "--timeout", "3")
    assert result.returncode == 1
    assert 'no output line matched type="never"' in result.stdout


@pytest.mark.spec("CACHE-1")
def test_a_compaction_is_an_expected_break_and_the_turn_after_it_extends() -> None:
    result = probe(
        *jsonl(),
        "--turn-end",
        "type=response,command=compact",
        "--perturb",
        "compaction",
        "--compact",
        '{"type": "compact"}',
    )
    line = perturbation(result, "compaction")
    assert line.startswith("pass"), result.stdout
    assert "broke from the conversation (expected)" in line


@pytest.mark.spec("CACHE-1")
def test_a_harness_that_breaks_its_cache_after_a_compaction_fails() -> None:
    result = probe(
        *jsonl("--nonce"),
        "--turn-end",
        "type=response,command=compact",
        "--perturb",
        "compaction",
        "--compact",
        '{"type": "compact"}',
    )
    line = perturbation(result, "compaction")
    assert line.startswith("fail"), result.stdout
    assert "does not extend" in line
    assert "Request: " in line


@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_a_workspace_change_breaks_a_harness_that_lists_its_files_in_the_opening() -> (
    None
):
    result = probe(*per_process("--tree"), "--perturb", "workspace")
    line = perturbation(result, "workspace")
    assert line.startswith("warn"), result.stdout
    assert "added and committed notes.md" in line
    assert "Files: " in line
    assert "notes.md" in line


@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_a_workspace_change_leaves_a_harness_with_a_stable_opening_passing() -> None:
    result = probe(*per_process(), "--perturb", "workspace")
    assert perturbation(result, "workspace").startswith("pass"), result.stdout


@needs_faketime
@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_the_next_day_breaks_a_harness_that_dates_every_process_s_system_prompt() -> (
    None
):
    result = probe(*per_process("--date"), "--perturb", "next-day")
    line = perturbation(result, "next-day")
    assert line.startswith("warn"), result.stdout
    assert "Current date: " in line


@needs_faketime
@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_the_next_day_leaves_a_harness_that_keeps_its_opening_passing() -> None:
    result = probe(*per_process("--date", "--keep-system"), "--perturb", "next-day")
    assert perturbation(result, "next-day").startswith("pass"), result.stdout


@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_the_next_day_is_not_judged_where_the_clock_cannot_reach() -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn {{prompt}}",
        "--next-cmd",
        "/sbin/ldconfig -p",  # statically linked: a preload never loads
        "--config-template",
        f"{TEMPLATE}:tiny.json",
        "--perturb",
        "next-day",
    )
    line = perturbation(result, "next-day")
    assert line.startswith("skip"), result.stdout
    assert "not judged" in line
    if faketime_library() is not None:
        assert "statically linked" in line


@pytest.mark.spec("CACHE-2")
def test_a_fresh_session_loses_the_static_opening_to_a_per_session_hash() -> None:
    result = probe(*per_process("--session-hash"), "--perturb", "fresh-session")
    line = perturbation(result, "fresh-session")
    assert line.startswith("warn"), result.stdout
    assert "Session: " in line
    assert "(fresh session)" in result.stdout


@pytest.mark.spec("CACHE-2")
def test_a_fresh_session_shares_the_static_opening_of_a_stable_harness() -> None:
    result = probe(*per_process(), "--perturb", "fresh-session")
    line = perturbation(result, "fresh-session")
    assert line.startswith("pass"), result.stdout
    assert "shared (#" in line


BAD = HERE / "bad_probe_harnesses" / "drops_line_before_ready.py"
DROPS = f"{shlex.quote(sys.executable)} {shlex.quote(str(BAD))} --log-dir {{log_dir}}"


@pytest.mark.spec("CHECK-3")
def test_a_line_dropped_before_the_harness_was_ready_is_reported_once_it_is_idle() -> (
    None
):
    started = time.monotonic()
    result = probe(
        "--cmd",
        DROPS,
        "--base-url-env",
        "OPENAI_BASE_URL",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--timeout",
        "40",
    )
    took = time.monotonic() - started
    assert result.returncode == 1
    assert "turn 1 of 3 was dropped: the harness read its line" in result.stdout
    assert took < 20, f"reported after {took:.1f} s, as if waiting out the timeout"


@pytest.mark.spec("CHECK-3", "CACHE-3")
def test_waiting_for_the_harness_s_ready_line_on_stderr_loses_no_line() -> None:
    result = probe(
        "--cmd",
        DROPS,
        "--resume-cmd",
        DROPS.replace("--log-dir {log_dir}", "--resume {log_path}"),
        "--base-url-env",
        "OPENAI_BASE_URL",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--ready-when",
        "stderr:agent ready",
    )
    assert result.returncode == 0, result.stdout
    assert "run 2: 1 of 1 turn(s) fed, 1 handled" in result.stdout


@pytest.mark.spec("CHECK-3")
def test_requests_to_paths_the_fake_does_not_serve_are_named_not_judged() -> None:
    result = probe(*per_process("--list-models"))
    out = result.stdout
    assert (
        "note: the harness sent 3 request(s) to GET /models, which the fake does"
        " not serve" in out
    ), out
    assert "run 2: 1 of 1 turn(s) fed, 1 handled, 1 request(s);" in out


@pytest.mark.spec("CHECK-3")
def test_a_prompt_file_placeholder_carries_the_turn_text() -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn --prompt-file {{prompt_file}}",
        "--next-cmd",
        f"{TINY} turn --continue --prompt-file {{prompt_file}}",
        "--config-template",
        f"{TEMPLATE}:tiny.json",
    )
    assert relation(result.stdout, 2) == ("run 3", "append")


@pytest.mark.spec("CHECK-3", "CACHE-3")
def test_a_settle_time_with_no_output_is_the_last_resort_readiness() -> None:
    result = probe(
        "--cmd",
        DROPS,
        "--base-url-env",
        "OPENAI_BASE_URL",
        "--api-key-env",
        "OPENAI_API_KEY",
        "--ready-when",
        "settle:1",
    )
    assert result.returncode == 0, result.stdout
    assert "run 1: 3 of 3 turn(s) fed, 3 handled, 3 request(s)" in result.stdout


@pytest.mark.spec("CHECK-3")
def test_a_turn_process_that_never_exits_is_a_clear_error_after_the_timeout() -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn {{prompt}}",
        "--next-cmd",
        f"{shlex.quote(sys.executable)} -c 'import time; time.sleep(60)'",
        "--config-template",
        f"{TEMPLATE}:tiny.json",
        "--timeout",
        "2",
    )
    assert result.returncode == 1
    assert (
        "its turn was not handled within 2 s: the process did not exit" in result.stdout
    )


@pytest.mark.spec("CHECK-3")
def test_without_a_key_per_process_requests_go_by_the_process_boundaries() -> None:
    args = [
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn {{prompt}}",
        "--next-cmd",
        f"{TINY} turn --continue {{prompt}}",
        "--base-url-env",
        "TINY_BASE_URL",
    ]
    result = probe(*args)
    out = result.stdout
    assert "requests attributed to processes by when they ran" in out
    for number in (1, 2, 3):
        assert f"run {number}: 1 of 1 turn(s) fed, 1 handled, 1 request(s);" in out


def timeline_relations(out: str) -> list[tuple[str, str]]:
    """(index, relation) of every row of a cache judgement's timeline."""
    return re.findall(
        r"^\s+(\d+)  (?:run|process) \d+\s+\S+\s+\d+\s+\d+\s+\S+\s+\d+  (\w+)",
        out,
        re.M,
    )


@pytest.mark.spec("CACHE-2", "CACHE-3")
def test_keep_holds_the_fresh_session_s_requests_and_check_judges_them_alike(
    tmp_path: Path,
) -> None:
    result = probe(
        *per_process(), "--perturb", "fresh-session", "--keep", str(tmp_path)
    )
    lines = [
        json.loads(line)
        for line in (tmp_path / "requests.jsonl").read_text().splitlines()
    ]
    assert [line["index"] for line in lines] == [0, 1, 2, 3], result.stdout
    assert [line.get("process_start") for line in lines] == [
        None,
        "resume",
        "resume",
        "fresh",
    ]
    status, out, _ = reqfold_here(
        "check", "--requests", str(tmp_path / "requests.jsonl")
    )
    assert status == result.returncode == 0, out
    assert timeline_relations(out) == timeline_relations(result.stdout)
    assert ("3", "fresh") in timeline_relations(out)
    # the processes carry the probe's names for them: one naming in both
    assert re.search(r"^\s+3  run 4\s", out, re.M), out
    assert re.search(r"^\s+3  run 4\s", result.stdout, re.M), result.stdout
    assert not re.search(r"process \d", out), out
    assert "pass  cache/fresh-session-keeps-opening" in out


STATIC_SOURCE = """#include <time.h>
int main(void) { struct timespec t = {1, 0}; nanosleep(&t, 0); return 0; }
"""
"""A program that lives a second: long enough for the probe's scans."""


def static_program(folder: Path) -> Path:
    """A statically linked (static-pie, as Codex's binary) program, or skip."""
    source, program = folder / "lives.c", folder / "lives"
    source.write_text(STATIC_SOURCE)
    for flag in ("-static-pie", "-static"):
        built = (
            subprocess.run(
                ["gcc", flag, "-O1", "-o", str(program), str(source)],
                capture_output=True,
                check=False,
            )
            if shutil.which("gcc")
            else None
        )
        if built is not None and built.returncode == 0:
            return program
    pytest.skip("no C compiler that links statically here (gcc and libc6-dev)")


@needs_faketime
@pytest.mark.spec("CACHE-3", "CACHE-2")
def test_the_next_day_is_not_judged_when_a_launcher_starts_a_static_program(
    tmp_path: Path,
) -> None:
    launcher = HERE / "bad_probe_harnesses" / "launches_a_static_program.py"
    static = static_program(tmp_path)
    launch = f"{shlex.quote(sys.executable)} {shlex.quote(str(launcher))} {static} --"
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn --date --keep-system {{prompt}}",
        "--next-cmd",
        f"{launch} {TINY} turn --continue --date --keep-system {{prompt}}",
        "--config-template",
        f"{TEMPLATE}:tiny.json",
        "--perturb",
        "next-day",
    )
    line = perturbation(result, "next-day")
    assert line.startswith("skip"), result.stdout
    assert f"{static} (pid " in line
    assert "statically linked" in line


def outside_config(destination: Path, *flags: str) -> list[str]:
    """The tiny harness one process per turn, with a second template written
    outside the working folder (the harness reads tiny.json)."""
    return [*per_process(), "--config-template", f"{TEMPLATE}:{destination}", *flags]


@pytest.mark.spec("CHECK-3")
def test_a_config_destination_that_exists_outside_the_workdir_is_refused(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "settings.json"
    mine.write_text("mine\n")
    result = probe(*outside_config(mine))
    assert result.returncode == 2
    assert "exists outside the probe's working folder" in result.stderr
    assert "--config-overwrite" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert mine.read_text() == "mine\n"


@pytest.mark.spec("CHECK-3")
def test_config_overwrite_puts_the_file_back_when_the_probe_ends(
    tmp_path: Path,
) -> None:
    mine = tmp_path / "settings.json"
    mine.write_text("mine\n")
    result = probe(*outside_config(mine, "--config-overwrite"))
    assert "run 3: 1 of 1 turn(s) fed, 1 handled" in result.stdout, result.stdout
    assert mine.read_text() == "mine\n"


@pytest.mark.spec("CHECK-3")
def test_a_config_file_the_probe_made_outside_the_workdir_is_removed(
    tmp_path: Path,
) -> None:
    made = tmp_path / "made.json"
    result = probe(*outside_config(made))
    assert "run 3: 1 of 1 turn(s) fed, 1 handled" in result.stdout, result.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spec("CHECK-3")
def test_a_config_destination_in_a_missing_folder_outside_the_workdir_is_refused(
    tmp_path: Path,
) -> None:
    result = probe(*outside_config(tmp_path / "new" / "deeper" / "c.json"))
    assert result.returncode == 2
    assert "does not exist" in result.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spec("CACHE-2")
def test_a_fresh_session_under_a_new_cache_key_is_said_to_start_a_new_partition() -> (
    None
):
    result = probe(*per_process("--cache-key", "user_id"), "--perturb", "fresh-session")
    line = perturbation(result, "fresh-session")
    assert line.startswith("warn"), result.stdout
    assert "starts a new cache partition: its user_id '" in line
    assert "shares no opening" not in line


@pytest.mark.spec("CHECK-3")
def test_a_turn_with_no_request_and_no_log_names_its_run_and_no_log() -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{TINY} turn {{prompt}}",
        "--next-cmd",
        f"{shlex.quote(sys.executable)} -c pass",  # exits 0, sends nothing
        "--config-template",
        f"{TEMPLATE}:tiny.json",
    )
    out = result.stdout
    assert result.returncode == 1, out
    for run in ("run 2", "run 3"):
        assert f"turn(s) 1 of {run} ended without a request reaching the" in out
    assert "in the log" not in out


@pytest.mark.spec("CHECK-3")
def test_a_config_file_that_cannot_be_written_is_named() -> None:
    args = per_process()
    args[args.index(f"{TEMPLATE}:tiny.json")] = f"{TEMPLATE}:README.md/tiny.json"
    result = probe(*args)
    assert result.returncode == 3, result.stdout
    assert re.search(
        r"run 1: not started \(the configuration file /\S+/work/README\.md/tiny\.json"
        r" cannot be written: ",
        result.stdout,
    ), result.stdout


@pytest.mark.spec("CHECK-3")
def test_a_template_word_that_is_no_placeholder_gets_a_note_naming_it(
    tmp_path: Path,
) -> None:
    template = tmp_path / "tiny.json.template"
    template.write_text(
        '{"baseUrl": "{base_url}", "apiKey": "{api_key}", "note": "{apikey} {nope}"}'
    )
    args = per_process()
    args[args.index(f"{TEMPLATE}:tiny.json")] = f"{template}:tiny.json"
    result = probe(*args)
    assert (
        f"note: --config-template {template} holds {{apikey}}, {{nope}}, not a"
        " placeholder" in result.stdout
    ), result.stdout
    assert "run 3: 1 of 1 turn(s) fed, 1 handled" in result.stdout


@pytest.mark.spec("CHECK-3")
def test_no_request_at_all_is_said_instead_of_an_empty_cache_judgement() -> None:
    result = probe(
        "--drive",
        "process",
        "--cmd",
        f"{shlex.quote(sys.executable)} -c pass",
        "--next-cmd",
        f"{shlex.quote(sys.executable)} -c pass",
        "--base-url-env",
        "TINY_BASE_URL",
    )
    out = result.stdout
    assert result.returncode == 1, out
    assert "no request reached the fake: there is no cache to judge" in out
    assert "note: --next-cmd is --cmd: every turn runs the same command" in out
    assert "timeline:" not in out
    assert "cache judgement" not in out
