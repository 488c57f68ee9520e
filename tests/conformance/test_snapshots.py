"""Regression snapshots, in process: masking, the serializer, the store, the recorder.

tests/conformance/test_snapshots_run.py drives the same through
``reqfold run --snapshot-dir`` against real harness processes.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, strategies as st
from syrupy.extensions.amber.serializer import AmberDataSerializer

from reqfold.conformance.harness.evidence import Evidence
from reqfold.conformance.harness.scenarios import load_scenarios
from reqfold.conformance.snapshots.evidence import evidence_snapshot
from reqfold.conformance.snapshots.extension import (
    OrderedAmber,
    SessionSnapshotExtension,
)
from reqfold.conformance.snapshots.normalize import (
    Masker,
    body_form,
    log_lines,
    request_snapshot,
    session_snapshot,
)
from reqfold.conformance.snapshots.options import folder_problem, usage_problem
from reqfold.conformance.snapshots.recorder import DRIFTED, SnapshotRecorder
from reqfold.conformance.snapshots.store import Comparison, SnapshotStore, Status
from reqfold.conformance.snapshots.where import (
    changed_members,
    first_change,
    render_path,
)
from reqfold.reference.revisions import Revision

UUID = "3f2b8c1e-9a4d-4e6f-8b7a-0c1d2e3f4a5b"
OTHER_UUID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
ULID = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def line(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":")).encode() + b"\n"


def captured(body: Any, **extra: Any) -> dict[str, Any]:
    """A request in the fake's JSON form (`fakes.dump_captured_request`)."""
    raw = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    request: dict[str, Any] = {
        "index": 0,
        "method": "POST",
        "path": "/chat/completions",
        "status": 200,
        "at": 12.5,
        "key": "62bef6a3cf56f7f7",
        "headers": [
            ["host", "127.0.0.1:41234"],
            ["accept-encoding", "gzip, deflate"],
            ["connection", "keep-alive"],
            ["authorization", "Bearer sk-secret"],
            ["content-type", "application/json"],
            ["x-request-id", UUID],
            ["content-length", str(len(raw))],
        ],
        "body": body,
        "raw_body": raw,
        "raw_body_base64": None,
        "reply": None,
        "usage": None,
        "diagnostic": {
            "prompt_tokens": 300,
            "cached_tokens": 256,
            "relation": "diverged",
            "closest_request": 0,
            "divergence": {"field": "messages[0].content"},
        },
    }
    request.update(extra)
    return request


def snapshot_data(system: str = "You are terse.", seq_time: int = 1_000) -> Any:
    log = line(
        {"type": "session", "version": 0, "id": "s", "createdAt": seq_time}
    ) + line(
        {
            "type": "request/header",
            "seq": 0,
            "time": seq_time + 1,
            "data": {"header": {"system": system}, "reason": "initial"},
        }
    )
    body = {"model": "m", "messages": [{"role": "system", "content": system}]}
    return session_snapshot(log=log, requests=[captured(body)], instances=["i1"])


# ------------------------------------------------------------ masking


def test_times_are_masked_by_member_name_and_kept_inside_text() -> None:
    masker = Masker()
    masked = masker.value(
        {
            "time": 1767225600001,
            "createdAt": "2026-01-01T00:00:00Z",
            "data": {"startedAt": 5, "time": {"zone": "UTC"}, "flag": True},
            "text": "Current time: 1767225600001 ms.",
        }
    )
    assert masked == {
        "time": "<time>",
        "createdAt": "<time>",
        "data": {"startedAt": "<time>", "time": {"zone": "UTC"}, "flag": True},
        "text": "Current time: 1767225600001 ms.",
    }


def test_generated_ids_get_one_mask_each_wherever_they_appear() -> None:
    log = line({"type": "x", "seq": 0, "time": 1, "data": {"id": UUID}}) + line(
        {"type": "y", "seq": 1, "time": 2, "data": {"ids": [OTHER_UUID, ULID, UUID]}}
    )
    body = {"messages": [{"role": "user", "content": f"msg_{UUID} and {ULID}"}]}
    data = session_snapshot(log=log, requests=[captured(body)])
    assert data["log"][0]["data"] == {"id": "<id-1>"}
    assert data["log"][1]["data"] == {"ids": ["<id-2>", "<id-3>", "<id-1>"]}
    assert data["requests"][0]["body"]["messages"][0]["content"] == (
        "msg_<id-1> and <id-3>"
    )
    assert "x-request-id: <id-1>" in data["requests"][0]["headers"]


def test_words_and_short_hex_are_not_taken_for_ids() -> None:
    masker = Masker()
    text = "deadbeef cafe 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ decade-long facade"
    assert masker.text(text) == text
    assert masker.text("sha 0123456789abcdef0123") == "sha <id-1>"


def test_the_run_folder_is_masked_before_anything_inside_it() -> None:
    masker = Masker({"/tmp/run": "<workdir>", "/tmp/run/deep": "<deep>"})
    assert masker.text("/tmp/run/deep/x and /tmp/run/y") == "<deep>/x and <workdir>/y"


def test_a_damaged_log_is_kept_line_by_line_not_refused() -> None:
    lines = log_lines(b'{"type":"session"}\nnot json\n{"type":"turn/st')
    assert lines == [
        {"type": "session"},
        {"unparsed line": "not json"},
        {"torn tail": '{"type":"turn/st'},
    ]


def test_member_order_of_the_log_and_the_body_is_kept() -> None:
    log = b'{"type":"t","seq":0,"time":1,"data":{"z":1,"a":2}}\n'
    body = {"tools": [], "model": "m", "messages": []}
    data = session_snapshot(log=log, requests=[captured(body)])
    assert list(data["log"][0]) == ["type", "seq", "time", "data"]
    assert list(data["log"][0]["data"]) == ["z", "a"]
    assert list(data["requests"][0]["body"]) == ["tools", "model", "messages"]


def test_a_request_keeps_what_the_harness_chose_and_drops_what_the_client_did() -> None:
    shown = request_snapshot(captured({"model": "m"}), Masker(), "i2")
    assert shown == {
        "instance": "i2",
        "request": "POST /chat/completions",
        "status": 200,
        "headers": [
            "authorization: <secret>",
            "content-type: application/json",
            "x-request-id: <id-1>",
        ],
        "body form": "compact",
        "body": {"model": "m"},
        "cache": "300 prompt tokens, 256 cached; diverged of #0 at messages[0].content",
    }


def test_the_layout_of_the_body_is_part_of_the_snapshot() -> None:
    body = {"a": ["é", 1]}
    assert body_form(body, '{"a":["é",1]}') == "compact"
    assert body_form(body, '{"a": ["\\u00e9", 1]}') == "spaced, non-ASCII escaped"
    assert body_form(body, '{ "a":["é",1]}') == "other layout"
    not_json = request_snapshot(
        captured(None, raw_body="hello"), Masker(), None
    )  # a body that is not JSON is kept as text
    assert (not_json["body form"], not_json["body"]) == ("not JSON", "hello")


# ------------------------------------------------------------ the serializer


def test_the_serializer_keeps_member_order_where_amber_sorts() -> None:
    data = {"zeta": 1, "alpha": {"y": 2, "b": 3}}
    ordered = OrderedAmber.serialize(data)
    assert ordered.index("zeta") < ordered.index("alpha")
    assert ordered.index("'y'") < ordered.index("'b'")
    sorted_text = AmberDataSerializer.serialize(data)
    assert sorted_text.index("alpha") < sorted_text.index("zeta")


def test_a_reordered_body_is_a_different_snapshot() -> None:
    extension = SessionSnapshotExtension()
    one = extension.serialize({"body": {"model": "m", "tools": []}})
    two = extension.serialize({"body": {"tools": [], "model": "m"}})
    assert not extension.matches(serialized_data=one, snapshot_data=two)


# ------------------------------------------------------------ where it changed


JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
)
JSON_VALUES = st.recursive(
    JSON_LEAVES,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


def leaf_paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaf_paths(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in leaf_paths(v, (*path, i))]
    return [path]


def changed_at(value: Any, path: tuple[Any, ...]) -> Any:
    copied = copy.deepcopy(value)
    target = copied
    for part in path[:-1]:
        target = target[part]
    old = target[path[-1]]
    target[path[-1]] = ["changed"] if not isinstance(old, list) else "changed"
    return copied


@given(
    st.dictionaries(st.text(max_size=6), JSON_VALUES, min_size=1, max_size=4),
    st.data(),
)
def test_the_first_change_names_the_member_that_changed(
    value: dict[str, Any], data: st.DataObject
) -> None:
    paths = [p for p in leaf_paths(value) if p]
    assume(paths)
    path = data.draw(st.sampled_from(paths))
    stored = OrderedAmber.serialize(value)
    received = OrderedAmber.serialize(changed_at(value, path))
    found = first_change(stored, received)
    assert found is not None
    assert found[1] == render_path(path)
    assert changed_members(stored, received) == [render_path(path)]


def test_every_changed_member_is_named_not_only_the_first() -> None:
    stored = OrderedAmber.serialize(snapshot_data("You are terse."))
    received = OrderedAmber.serialize(snapshot_data("You are brief."))
    assert first_change(stored, received) is not None
    assert changed_members(stored, received) == [
        "log[1].data.header.system",
        "requests[0].body.messages[0].content",
    ]
    assert first_change(stored, stored) is None
    assert changed_members(stored, stored) == []


def test_an_appended_item_is_named_once() -> None:
    before = {"log": [{"seq": 0, "type": "a"}]}
    after = {"log": [{"seq": 0, "type": "a"}, {"seq": 1, "type": "b"}]}
    stored, received = OrderedAmber.serialize(before), OrderedAmber.serialize(after)
    assert changed_members(stored, received) == ["log[1]"]


# ------------------------------------------------------------ the store


def test_a_snapshot_is_written_then_matched_then_drifts_then_is_updated(
    tmp_path: Path,
) -> None:
    name = "plain-turns@session-prefix"
    first = SnapshotStore(tmp_path).compare(name, snapshot_data())
    assert first.status is Status.NEW
    assert (
        (tmp_path / f"{name}.ambr")
        .read_text()
        .startswith(
            "# serializer version: reqfold-1\n# name: plain-turns@session-prefix\n"
        )
    )
    # Times differ between runs, and are masked.
    again = SnapshotStore(tmp_path).compare(name, snapshot_data(seq_time=99_999))
    assert again.status is Status.SAME

    drift = SnapshotStore(tmp_path).compare(name, snapshot_data("You are brief."))
    assert drift.status is Status.DRIFT
    assert any("You are terse." in d and d.startswith("-") for d in drift.diff)
    assert any("You are brief." in d and d.startswith("+") for d in drift.diff)
    assert drift.where.startswith("log[1].data.header.system (line ")
    assert drift.changed == (
        "log[1].data.header.system",
        "requests[0].body.messages[0].content",
    )
    # Without --snapshot-update, the stored snapshot is left as it was.
    assert "You are terse." in (tmp_path / f"{name}.ambr").read_text()

    updated = SnapshotStore(tmp_path, update=True).compare(
        name, snapshot_data("You are brief.")
    )
    assert updated.status is Status.UPDATED
    after = SnapshotStore(tmp_path).compare(name, snapshot_data("You are brief."))
    assert after.status is Status.SAME
    assert [p.name for p in tmp_path.iterdir()] == [f"{name}.ambr"]


def test_the_line_named_is_the_changed_line_of_the_file(tmp_path: Path) -> None:
    store = SnapshotStore(tmp_path)
    store.compare("s", snapshot_data())
    drift = store.compare("s", snapshot_data("You are brief."))
    number = int(drift.where.rsplit("line ", 1)[1].split(" ")[0])
    text = (tmp_path / "s.ambr").read_text().split("\n")
    assert "You are terse." in text[number - 1]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("# serializer version: 1\n# name: s\n  'x'\n# ---\n", "another serializer"),
        ("just some text\n", "cannot be read"),
        (b"\xff\xfe not text", "cannot be read"),
    ],
)
def test_a_stored_file_that_cannot_be_read_is_an_error_until_updated(
    tmp_path: Path, content: str | bytes, why: str
) -> None:
    path = tmp_path / "s.ambr"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    result = SnapshotStore(tmp_path).compare("s", snapshot_data())
    assert result.status is Status.ERROR
    assert why in result.message
    assert "--snapshot-update rewrites it" in result.message
    rewritten = SnapshotStore(tmp_path, update=True).compare("s", snapshot_data())
    assert rewritten.status is Status.UPDATED
    assert SnapshotStore(tmp_path).compare("s", snapshot_data()).status is Status.SAME


def test_a_snapshot_that_cannot_be_written_is_an_error_not_an_exception(
    tmp_path: Path,
) -> None:
    (tmp_path / ".s.ambr.tmp").mkdir()  # where the new text would be written
    result = SnapshotStore(tmp_path).compare("s", snapshot_data())
    assert result.status is Status.ERROR
    assert result.message == "the snapshot cannot be written: Is a directory"
    assert not (tmp_path / "s.ambr").exists()


# ------------------------------------------------------------ options, recorder


def options(**given: Any) -> argparse.Namespace:
    values = {"snapshot_dir": None, "snapshot_update": False, "snapshot_strict": False}
    return argparse.Namespace(**{**values, **given})


def test_a_missing_folder_is_made_and_a_file_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "a" / "b"
    assert usage_problem(options(snapshot_dir=str(folder))) is None
    assert folder.is_dir()
    assert list(folder.iterdir()) == []  # the probe file is gone
    file = tmp_path / "file"
    file.write_text("x")
    assert usage_problem(options(snapshot_dir=str(file))) == (
        f"--snapshot-dir {str(file)!r} is not a folder"
    )


def test_a_folder_that_cannot_be_written_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        problem = folder_problem(folder)
        if problem is None:  # root writes anyway: use a read-only file system
            if folder_problem(Path("/sys")) is None:
                pytest.skip("no folder here refuses writes")
            problem = folder_problem(Path("/sys"))
    finally:
        folder.chmod(0o700)
    assert problem is not None
    assert "cannot be written" in problem


@pytest.mark.parametrize("option", ["snapshot_update", "snapshot_strict"])
def test_the_other_snapshot_options_need_a_folder(option: str) -> None:
    problem = usage_problem(options(**{option: True}))
    assert problem is not None
    assert problem.endswith("needs --snapshot-dir (the folder of snapshots)")


def recorded(tmp_path: Path, *statuses: Status, strict: bool) -> SnapshotRecorder:
    recorder = SnapshotRecorder(SnapshotStore(tmp_path), strict=strict)
    for number, status in enumerate(statuses):
        recorder.results.append(
            Comparison(name=f"s{number}", status=status, path=tmp_path / "s.ambr")
        )
    return recorder


@pytest.mark.parametrize(
    ("statuses", "strict", "verdict", "expected"),
    [
        ((Status.SAME, Status.NEW), True, 0, 0),
        ((Status.SAME, Status.DRIFT), False, 0, 0),
        ((Status.SAME, Status.DRIFT), True, 0, DRIFTED),
        ((Status.ERROR,), True, 0, DRIFTED),
        ((Status.UPDATED,), True, 0, 0),
        ((Status.DRIFT,), True, 3, 3),
        ((Status.DRIFT,), True, 1, 1),
    ],
)
def test_drift_fails_a_conformant_run_only_with_snapshot_strict(
    tmp_path: Path,
    statuses: tuple[Status, ...],
    strict: bool,
    verdict: int,
    expected: int,
) -> None:
    recorder = recorded(tmp_path, *statuses, strict=strict)
    assert recorder.exit_status(verdict) == expected


def test_a_bug_while_snapshotting_costs_that_snapshot_an_error_not_the_run(
    tmp_path: Path,
) -> None:
    class Broken:
        scenario = argparse.Namespace(id="plain-turns")
        revision = argparse.Namespace(value="session-prefix")
        log = b""
        captures = None  # not a list: evidence_snapshot raises
        capture_instances = ()
        log_path = tmp_path / "x.jsonl"

    recorder = SnapshotRecorder(SnapshotStore(tmp_path))
    recorder.record(Broken())  # type: ignore[arg-type]
    (result,) = recorder.results
    assert result.status is Status.ERROR
    assert result.message.startswith("the suite failed to snapshot this run: ")
    report = recorder.report()
    assert report[0] == f"Snapshots in {tmp_path}: 1 error"
    assert report[1].startswith("  ERROR    plain-turns@session-prefix: the suite")


def test_many_drifted_snapshots_show_a_few_diffs_and_one_line_for_each_other(
    tmp_path: Path,
) -> None:
    recorder = SnapshotRecorder(SnapshotStore(tmp_path))
    for number in range(52):
        recorder.results.append(
            Comparison(
                name=f"s{number}",
                status=Status.DRIFT,
                path=tmp_path / "s.ambr",
                diff=["- old line", "+ new line"] * 8,
            )
        )
    full = recorder.report()
    short = recorder.report(detailed=3)
    assert len(full) > 52 * 16
    drifted = [line for line in short if line.startswith("  DRIFT ")]
    assert [line.split()[1] for line in drifted] == [f"s{n}" for n in range(52)]
    assert sum(1 for line in short if "+ new line" in line) == 3 * 8
    assert "  (the diffs of the first 3 only: --show all prints all 52)" in short
    assert len(short) < 52 + 3 * 20 + 5


def test_a_log_left_on_disk_is_said_in_the_snapshot_not_shown_empty(
    tmp_path: Path,
) -> None:
    scenario = next(s for s in load_scenarios() if s.id == "plain-turns")
    evidence = Evidence(
        scenario=scenario,
        revision=Revision.SESSION_PREFIX,
        log_path=tmp_path / "huge.jsonl",
        log_size=100 << 20,
    )
    said = "the log is 104857600 bytes, larger than the suite holds in memory"
    assert evidence_snapshot(evidence)["log"] == [{"not read": said}]
