"""What ``reqfold vectors`` and ``reqfold check`` end with: a verdict coloured
on a terminal as ``reqfold run``'s (never with ``NO_COLOR``), an
implementation that did not start said as such (no empty totals), and a
reader of stdout that leaves changes no verdict. Each runs as a real
``reqfold`` child process (a terminal, a pipe and exit statuses are what a
process shows), the implementations too."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here
from terminal import reqfold_on_a_terminal, xterm_environment

ROOT = Path(__file__).resolve().parents[2]
ESC = "\x1b["


def on_a_terminal(*args: str, **env: str) -> tuple[int, str]:
    """``reqfold ARGS`` with stdout on a pseudo-terminal; what it showed."""
    return reqfold_on_a_terminal(*args, env=xterm_environment(**env))


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    log = tmp_path_factory.mktemp("demo") / "demo.jsonl"
    status, out, err = reqfold_here("demo", "--log", str(log))
    assert status == 0, out + err
    return log


@pytest.mark.slow
def test_vectors_colours_its_verdict_on_a_terminal_unless_no_color_is_set() -> None:
    status, shown = on_a_terminal("vectors", "--revision", "session-prefix")
    assert status == 0, shown[-2000:]
    assert "Verdict: \x1b[1;32mCONFORMANT" in shown
    status, plain = on_a_terminal(
        "vectors", "--revision", "session-prefix", NO_COLOR="1"
    )
    assert status == 0
    assert ESC not in plain
    assert "Verdict: CONFORMANT" in plain


@pytest.mark.slow
def test_check_colours_its_verdict_on_a_terminal_unless_no_color_is_set(
    demo_log: Path,
) -> None:
    status, shown = on_a_terminal("check", str(demo_log))
    assert status == 0, shown
    assert f"{demo_log}: \x1b[1;32mCONFORMANT\x1b[0m: " in shown
    status, plain = on_a_terminal("check", str(demo_log), NO_COLOR="1")
    assert status == 0
    assert ESC not in plain
    assert f"{demo_log}: CONFORMANT: " in plain


def test_check_into_a_pipe_has_no_colour(demo_log: Path) -> None:
    status, out, _ = reqfold_here("check", str(demo_log))
    assert status == 0
    assert out.startswith(f"{demo_log}: CONFORMANT: ")


CRASHES = shlex.join(
    [
        sys.executable,
        "-c",
        "import sys; print('boom: no config', file=sys.stderr); sys.exit(1)",
    ]
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("impl", "why"),
    [
        (CRASHES, "boom: no config"),
        (shlex.join(["sleep", "100"]), "no answer to initialize within 1s"),
    ],
    ids=["crashes", "hangs"],
)
def test_vectors_of_an_implementation_that_did_not_start_say_so_without_totals(
    impl: str, why: str
) -> None:
    status, out, err = reqfold_here("vectors", "--impl", impl, "--timeout", "1")
    assert status == 3, out + err
    assert out == "Verdict: NO VERDICT: the implementation did not start\n"
    assert err.startswith("reqfold vectors: the implementation did not start: ")
    assert why in err
    assert err.count("\n") == 1


@pytest.mark.slow
@pytest.mark.parametrize("form", ["text", "json"])
def test_vectors_whose_reader_leaves_exit_with_the_verdicts_status(form: str) -> None:
    child = subprocess.Popen(
        [
            *(sys.executable, "-m", "reqfold.conformance.cli", "vectors"),
            *("--revision", "session-prefix", "--format", form),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert child.stdout is not None
        assert child.stderr is not None
        first = child.stdout.read(100)  # like ``| head -c 100``
        child.stdout.close()
        err = child.stderr.read()
        status = child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stderr is not None:
            child.stderr.close()
    assert len(first) == 100
    assert status == 0, err
    assert err == b""
