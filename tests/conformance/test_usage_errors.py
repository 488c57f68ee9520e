"""A usage error is one line and where to read more, never the whole usage
text; ``--help`` still prints it all."""

from __future__ import annotations

import pytest
from cli_in_process import reqfold_here


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ("fake", "serve", "--dialect", "nope"),
            "reqfold fake serve: error: argument --dialect: invalid choice: 'nope'",
        ),
        (
            ("probe", "--dialect", "nope"),
            "reqfold probe: error: argument --dialect: invalid choice: 'nope'",
        ),
        (
            ("check", "--format", "xml"),
            "reqfold check: error: argument --format: invalid choice: 'xml'",
        ),
        (
            ("run", "--only", "bogus"),
            "reqfold run: error: argument --only: invalid choice: 'bogus'",
        ),
        (("bogus",), "reqfold: error: argument COMMAND: invalid choice: 'bogus'"),
    ],
)
def test_a_usage_error_is_one_line_and_where_to_read_more(
    args: tuple[str, ...], said: str
) -> None:
    status, out, err = reqfold_here(*args)
    assert status == 2
    assert out == ""
    error, see = err.splitlines()
    assert error.startswith(said)
    command = said.split(": error:")[0]
    assert see == f"see '{command} --help'"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("fake",), "reqfold fake: error: give an action: serve"),
        (
            ("check",),
            "reqfold check: error: give a session log, or --requests CAPTURE alone",
        ),
        (("check", "-", "-"), "reqfold check: error: '-' (standard input)"),
    ],
)
def test_a_command_short_of_arguments_says_so_in_one_line_and_where_to_read_more(
    args: tuple[str, ...], said: str
) -> None:
    status, out, err = reqfold_here(*args)
    assert status == 2
    assert out == ""
    error, see = err.splitlines()
    assert error.startswith(said)
    command = said.split(": error:")[0]
    assert see == f"see '{command} --help'"


def test_help_still_prints_the_whole_usage() -> None:
    status, out, _ = reqfold_here("check", "--help")
    assert status == 0
    assert out.startswith("usage: reqfold check ")
    assert len(out.splitlines()) > 10
