"""The declarative parts of ``reqfold probe``'s drivers, in process (pure)."""

from __future__ import annotations

import json
import shutil
import struct
import sys
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.probe.config_files import parse_config_template, render
from reqfold.conformance.probe.perturb import (
    executable_of,
    is_go_program,
    is_static_elf,
    next_day_env,
    parse_perturbations,
)
from reqfold.conformance.probe.styles import (
    parse_line_match,
    parse_readiness,
    send_line,
)
from reqfold.conformance.probe.workdir import change_workspace, create_workdir


def test_a_turn_end_matches_json_lines_by_member_paths_and_values() -> None:
    end = parse_line_match("type=response,command=compact,success=true")
    assert end.matches(b'{"type":"response","command":"compact","success":true}\n')
    assert not end.matches(b'{"type":"response","command":"compact","success":false}')
    assert not end.matches(b'{"type":"response"}')
    assert not end.matches(b"type=response not json")
    nested = parse_line_match("event.kind=done")
    assert nested.matches(b'{"event": {"kind": "done"}}')


def test_a_prompt_is_sent_as_a_json_string_and_a_json_command_as_it_is() -> None:
    template = '{"type": "prompt", "message": "{prompt}"}'
    line = send_line(template, 'say "hi"\nthen stop')
    assert json.loads(line) == {"type": "prompt", "message": 'say "hi"\nthen stop'}
    assert send_line(template, '{"type": "compact"}') == '{"type": "compact"}'


@pytest.mark.parametrize(
    ("text", "kind"),
    [("stdout:> ", "stdout"), ("stderr:ready", "stderr"), ("log", "log")],
)
def test_readiness_signals_are_parsed_by_kind(text: str, kind: str) -> None:
    assert parse_readiness(text).kind == kind


@pytest.mark.parametrize("text", ["settle:0", "settle:x", "log:x", "file:", "bell"])
def test_a_bad_readiness_signal_is_refused_with_a_reason(text: str) -> None:
    with pytest.raises(ValueError, match="--ready-when"):
        parse_readiness(text)


def test_a_config_template_fills_only_its_own_names_and_lands_in_the_workdir(
    tmp_path: Path,
) -> None:
    source = tmp_path / "t.json"
    source.write_text('{"url": "{base_url}", "key": "{api_key}", "keep": "{other}"}')
    template = parse_config_template(f"{source}:conf/{{model}}.json")
    destination, text = render(
        template,
        {"base_url": "http://x", "api_key": "k1", "model": "m", "workdir": "/w"},
    )
    assert destination == "/w/conf/m.json"
    assert json.loads(text) == {"url": "http://x", "key": "k1", "keep": "{other}"}


def test_a_config_template_that_cannot_be_read_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot be read"):
        parse_config_template(f"{tmp_path / 'missing'}:x.json")
    with pytest.raises(ValueError, match="SRC:DEST"):
        parse_config_template("no-destination")


def test_perturbations_are_named_or_all() -> None:
    assert parse_perturbations("workspace,next-day") == ("next-day", "workspace")
    assert len(parse_perturbations("all")) == 4
    with pytest.raises(ValueError, match="--perturb"):
        parse_perturbations("tomorrow")


def test_the_next_day_clock_is_preloaded_and_monotonic_clocks_are_left_alone() -> None:
    env = next_day_env("/lib/libfaketime.so.1", {"LD_PRELOAD": "/lib/other.so"})
    assert env["LD_PRELOAD"] == "/lib/libfaketime.so.1 /lib/other.so"
    assert env["FAKETIME"] == "+1d"
    assert env["FAKETIME_DONT_FAKE_MONOTONIC"] == "1"


def test_a_static_program_is_told_from_a_dynamic_one() -> None:
    assert not is_static_elf(sys.executable)
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if Path(ldconfig).exists():  # statically linked on Debian
        assert is_static_elf(ldconfig)


def _elf_with_sections(names: bytes) -> bytes:
    """A minimal 64-bit little-endian ELF file: a header and two sections,
    the second the section-name table holding `names`."""
    header = bytearray(64)
    header[:6] = b"\x7fELF\x02\x01"
    struct.pack_into("<Q", header, 40, 64)  # e_shoff
    struct.pack_into("<HHH", header, 58, 64, 2, 1)  # shentsize, shnum, shstrndx
    null = bytes(64)
    table = bytearray(64)
    struct.pack_into("<I", table, 4, 3)  # SHT_STRTAB
    struct.pack_into("<QQ", table, 24, 64 + 128, len(names))  # offset, size
    return bytes(header) + null + bytes(table) + names


def test_a_go_program_is_told_from_a_c_one(tmp_path: Path) -> None:
    go = tmp_path / "go-program"
    go.write_bytes(_elf_with_sections(b"\0.shstrtab\0.go.buildinfo\0.text\0"))
    c = tmp_path / "c-program"
    c.write_bytes(_elf_with_sections(b"\0.shstrtab\0.text\0.data\0"))
    assert is_go_program(str(go))
    assert not is_go_program(str(c))
    assert not is_go_program(sys.executable)


def test_a_script_s_program_is_found_through_its_shebang(tmp_path: Path) -> None:
    script = tmp_path / "harness"
    script.write_text(f"#!/usr/bin/env {Path(sys.executable).name}\nprint(1)\n")
    found = executable_of(str(script))
    assert found is not None
    assert not is_static_elf(found)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_working_folder_is_a_git_repository_the_workspace_change_moves(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "work"
    assert create_workdir(folder) is None
    assert (folder / ".git").is_dir()
    said = change_workspace(folder)
    assert "notes.md" in said
    assert (folder / "notes.md").exists()


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--drive", "jsonl"], "--drive jsonl needs --send"),
        (["--drive", "process", "--resume-cmd", "x"], "not --resume-cmd"),
        (["--drive", "process"], "--drive process needs --next-cmd"),
        (["--next-cmd", "x"], "--next-cmd is for --drive process"),
        (["--perturb", "compaction"], "needs --compact TEXT"),
        (["--perturb", "workspace"], "give --resume-cmd"),
        (["--send", '{"m": "{prompt}"}'], "for --drive jsonl"),
        (["--drive", "jsonl", "--send", "{}", "--turn-end", "t=1"], 'no "{prompt}"'),
        (["--drive", "jsonl", "--send", '{"m": "{prompt}"}', "--turn-end", "t"], "="),
        (["--drive", "jsonl", "--send", '"{prompt}"', "--turn-end", "t=1"], "object"),
    ],
)
def test_driver_arguments_that_do_not_fit_exit_two_with_one_line(
    args: list[str], said: str
) -> None:
    status, _, err = reqfold_here(
        "probe", "--cmd", "harness", "--base-url-env", "URL", "--log-dir", "x", *args
    )
    assert status == 2
    assert said in err
    assert len(err.strip().splitlines()) == 1


def test_without_a_base_url_variable_or_template_the_probe_says_how() -> None:
    status, _, err = reqfold_here("probe", "--cmd", "harness", "--log-dir", "x")
    assert status == 2
    assert "--base-url-env NAME or --config-template" in err
