"""Error lines quote what they are about as JSON, never as Python's repr:
a line an adapter wrote, a value a report holds, an operating system's
error (its words, not its errno)."""

from __future__ import annotations

import json
import shlex
import socket
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.adapters.wire import parse_message, response_problem
from reqfold.conformance.quoting import quoted_bytes


def test_a_line_that_is_not_json_rpc_is_quoted_as_a_json_string() -> None:
    with pytest.raises(ValueError, match="JSON-RPC") as raised:
        parse_message(b"1\n")
    assert str(raised.value) == 'not a JSON-RPC 2.0 message: "1\\n"'


def test_a_long_line_is_cut_and_says_how_much_more_it_held() -> None:
    said = quoted_bytes(b"x" * 200 + b"\n")
    assert said == json.dumps("x" * 120) + " (and 81 more bytes)"


def test_bytes_that_are_not_utf8_show_as_escapes_in_the_json_string() -> None:
    with pytest.raises(ValueError, match="UTF-8") as raised:
        parse_message(b"\xff1\n")
    assert str(raised.value) == 'not UTF-8 text: "\\\\xff1\\n"'


def test_an_id_that_does_not_echo_the_request_is_shown_as_json() -> None:
    problem = response_problem({"jsonrpc": "2.0", "id": "7", "result": None}, 7)
    assert problem == 'response id "7" does not echo request id 7'


@pytest.mark.slow
def test_run_says_an_adapter_line_as_json() -> None:
    impl = shlex.join([sys.executable, "-c", "print(1)"])
    code, out, err = reqfold_here("run", "--impl", impl, "--only", "vectors")
    assert code == 3, out + err
    assert 'not a JSON-RPC 2.0 message: "1\\n"' in out + err
    assert "b'" not in out + err


def _report(tmp_path: Path, change: dict[str, object]) -> Path:
    code, out, err = reqfold_here(
        "run", "--only", "vectors", "--report-json", str(tmp_path / "a.json")
    )
    assert code == 0, out + err
    data = json.loads((tmp_path / "a.json").read_text())
    data.update(change)
    changed = tmp_path / "b.json"
    changed.write_text(json.dumps(data))
    return changed


@pytest.mark.slow
def test_compare_says_a_wrong_value_of_a_report_as_json(tmp_path: Path) -> None:
    changed = _report(tmp_path, {"checks": None})
    code, _, err = reqfold_here("compare", str(tmp_path / "a.json"), str(changed))
    assert code == 2
    assert err.strip() == (
        f"reqfold compare: {changed} breaks run-report.schema.json at"
        " [\"checks\"]: null is not of type 'array'"
    )


@pytest.mark.slow
def test_fake_serve_on_a_port_in_use_says_the_systems_words_alone() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = reqfold_here("fake", "serve", "--port", str(port), limit=30)
    assert code == 2
    assert err.strip() == (
        f"reqfold fake serve: cannot listen on 127.0.0.1:{port}: Address already in use"
    )
    assert "Errno" not in err


@pytest.mark.slow
def test_compare_given_a_file_that_is_not_json_says_how_to_write_one(
    tmp_path: Path,
) -> None:
    report = _report(tmp_path, {})
    xml = tmp_path / "a.xml"
    xml.write_text("<testsuites/>\n")
    code, _, err = reqfold_here("compare", str(report), str(xml))
    assert code == 2
    assert err.strip() == (
        f"reqfold compare: {xml} is not JSON: expecting value at line 1, column 1;"
        " write one with 'reqfold run --report-json F'"
    )
