"""The cache gallery: small harnesses, one habit each, judged right.

Each harness under `cache_gallery/` is the minimal harness with one habit
changed. It runs as real child processes (one per "process" of the case)
against the fake served by uvicorn on 127.0.0.1; the capture is read in
its JSONL form and judged. Each case says the cause the judgement must
name, the stream and rules it must cite, whether the break is expected,
and the tokens lost must equal, to the token, what a pure append would
have had cached (the fake's own cache rule) minus what the fake reported.
Each case is played once per module (per xdist worker) and judged by every
test that reads it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reqfold.conformance.cache import (
    CacheJudgement,
    ProcessStart,
    cache_status,
    judge_cache,
    read_capture_lines,
)
from reqfold.fakes import FakeProvider, Reply, ToolCall, dump_capture_jsonl
from reqfold.fakes.dialects.base import cache_rule
from reqfold.fakes.server import running_server

pytestmark = pytest.mark.slow

GALLERY = Path(__file__).parent / "cache_gallery"


@dataclass(frozen=True)
class Run:
    """One process of the harness."""

    turns: int
    kind: str = "resume"
    day: int = 0
    add_file: bool = False


@dataclass(frozen=True)
class Case:
    harness: str
    runs: tuple[Run, ...]
    cause: str | None
    rules: tuple[str, ...] = ()
    expected: bool = False
    across: str = "within"
    streams: tuple[str, ...] = ("main",)
    replies: tuple[Reply, ...] = ()
    status: int = 0
    echo: bool = False
    spec: tuple[str, ...] = field(default=("STREAM-5",))
    profile: str = "deepseek"


TOOL_CALL = Reply(tool_calls=(ToolCall.of("read", {"path": "main.py"}),))
THOUGHT = Reply(
    reasoning="I should read main.py first.",
    tool_calls=(ToolCall.of("read", {"path": "main.py"}),),
)
CASES = [
    Case("clean", (Run(2), Run(2)), None, spec=("CACHE-1", "CACHE-3")),
    Case(
        "side_stream",
        (Run(2), Run(1)),
        None,
        streams=("main", "side 1"),
        spec=("STREAM-1", "STREAM-3"),
    ),
    Case(
        "date_in_system",
        (Run(2), Run(1, day=1)),
        "date-time",
        ("CACHE-3", "CACHE-2"),
        across="resume",
        spec=("CACHE-3", "CACHE-2"),
    ),
    Case(
        "session_nonce",
        (Run(2), Run(1, kind="fresh")),
        "nonce",
        ("STREAM-2", "CACHE-2"),
        across="fresh",
        spec=("STREAM-2",),
    ),
    Case(
        "folder_snapshot",
        (Run(2), Run(1, add_file=True)),
        "environment",
        ("CACHE-3",),
        across="resume",
        spec=("CACHE-3",),
    ),
    Case("tools_added", (Run(3),), "tools-added", ("CACHE-1",), status=1),
    Case(
        "short_system_edited",
        (Run(5),),
        "system-edited",
        ("CACHE-1",),
        status=1,
        spec=("CACHE-1", "STREAM-1"),
    ),
    Case(
        "tools_grown",
        (Run(5),),
        "tools-added",
        ("CACHE-1",),
        status=1,
        spec=("CACHE-1", "STREAM-1"),
    ),
    Case("tools_removed", (Run(3),), "tools-removed", ("CACHE-1",), status=1),
    Case(
        "parameters",
        (Run(3),),
        "parameters",
        ("CACHE-1",),
        status=1,
        profile="anthropic",
        spec=("CACHE-1", "STREAM-5"),
    ),
    Case("tools_reordered", (Run(3),), "tools-reordered", ("CACHE-1",), status=1),
    Case("tool_changed", (Run(3),), "tool-changed", ("CACHE-1",), status=1),
    Case("system_edited", (Run(3),), "system-edited", ("CACHE-1",), status=1),
    Case(
        "reasoning_stripped",
        (Run(2),),
        "reasoning-stripped",
        ("CACHE-1",),
        replies=(THOUGHT,),
        status=1,
    ),
    Case(
        "tool_output_truncated",
        (Run(2),),
        "tool-output-truncated",
        ("CACHE-1",),
        replies=(TOOL_CALL,),
        status=1,
    ),
    Case("messages_dropped", (Run(3),), "messages-dropped", ("CACHE-1",), status=1),
    Case(
        "summary_inserted",
        (Run(4),),
        "summary-inserted",
        ("CACHE-1",),
        expected=True,
        streams=("main", "side 1"),
    ),
    Case(
        "summary_prepended",
        (Run(4),),
        "summary-inserted",
        ("CACHE-1",),
        expected=True,
    ),
    Case("shape_only", (Run(3),), "shape-only", ("CACHE-1",), status=1),
    Case("cache_markers", (Run(3),), "cache-markers", ("CACHE-1",), expected=True),
    Case("model_change", (Run(3),), "model-change", ("CACHE-1",), expected=True),
    Case(
        "conversation_cleared",
        (Run(3),),
        "conversation-cleared",
        ("CACHE-1",),
        expected=True,
    ),
    Case(
        "history_dropped",
        (Run(4),),
        "message-edited",
        ("CACHE-1",),
        status=1,
        spec=("CACHE-1",),
    ),
    Case("echo_changed", (Run(2),), None, echo=True, spec=("STREAM-4",)),
]


def play(case: Case, tmp_path: Path) -> tuple[list[str], list[ProcessStart]]:
    """Run the case's processes against a served fake; the capture and starts."""
    provider = FakeProvider(case.profile)
    provider.push(*case.replies)
    workdir = tmp_path / "project"
    workdir.mkdir()
    (workdir / "main.py").write_text("print('hi')\n")
    state = tmp_path / "state.json"
    starts: list[ProcessStart] = []
    with running_server(provider) as url:
        for number, run in enumerate(case.runs, start=1):
            if run.add_file:
                (workdir / "notes.new").write_text("new\n")
            starts.append(
                ProcessStart(
                    first_index=len(provider.capture),
                    name=f"run {number}",
                    kind="first" if number == 1 else run.kind,  # type: ignore[arg-type]
                )
            )
            command = [
                sys.executable,
                str(GALLERY / f"{case.harness}.py"),
                "--url",
                url,
                "--state",
                str(state),
                "--turns",
                str(run.turns),
                "--day",
                str(run.day),
                "--workdir",
                str(workdir),
            ]
            if run.kind == "fresh":
                command.append("--fresh")
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=60, check=False
            )
            assert done.returncode == 0, done.stderr
    return dump_capture_jsonl(provider.capture).splitlines(), starts


Played = Callable[[Case], tuple[list[str], list[ProcessStart]]]
"""A case's capture and process starts, as `play` gave them."""


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """`play` of each case once per module (per xdist worker): the tests
    below judge the same capture in different ways and never change it."""
    plays: dict[str, tuple[list[str], list[ProcessStart]]] = {}

    def get(case: Case) -> tuple[list[str], list[ProcessStart]]:
        if case.harness not in plays:
            plays[case.harness] = play(case, tmp_path_factory.mktemp(case.harness))
        lines, starts = plays[case.harness]
        return list(lines), list(starts)

    return get


def usage_of(lines: list[str], index: int) -> tuple[int, int]:
    """The prompt tokens of a request and how many the fake read from cache."""
    (call,) = (c for c in read_capture_lines(lines) if c.index == index)
    assert call.usage is not None
    if "cache_read_input_tokens" in call.usage:  # Anthropic: three parts
        parts = (
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        )
        counts = [call.usage[part] for part in parts]
        assert all(isinstance(count, int) for count in counts)
        cached = call.usage["cache_read_input_tokens"]
        assert isinstance(cached, int)
        return sum(count for count in counts if isinstance(count, int)), cached
    prompt, cached = call.usage["prompt_tokens"], call.usage["prompt_cache_hit_tokens"]
    assert isinstance(prompt, int)
    assert isinstance(cached, int)
    return prompt, cached


def judged(case: Case, played: Played) -> tuple[CacheJudgement, list[str]]:
    lines, starts = played(case)
    return judge_cache(read_capture_lines(lines), starts=starts), lines


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, id=case.harness, marks=pytest.mark.spec(*case.spec))
        for case in CASES
    ],
)
@pytest.mark.spec("STREAM-5", "STREAM-1")
def test_each_gallery_harness_is_judged_with_its_cause(
    case: Case, played: Played
) -> None:
    judgement, _lines = judged(case, played)
    assert [s.name for s in judgement.streams] == list(case.streams)
    assert cache_status(judgement) == case.status
    if case.cause is None:
        assert judgement.breaks == []
    else:
        assert judgement.breaks, "the habit must show as a break"
        assert {b.cause for b in judgement.breaks} == {case.cause}
        for item in judgement.breaks:
            assert item.stream == "main"
            assert item.rules == case.rules
            assert item.across == case.across
            assert (item.expected is not None) is case.expected
            assert item.earlier or item.current, "the evidence is shown"
    if case.echo:
        assert judgement.echoes
        assert all(echo.field.endswith(".content") for echo in judgement.echoes)
    else:
        assert judgement.echoes == []


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.cause is not None and c.across != "fresh"],
    ids=lambda c: c.harness,
)
def test_the_tokens_lost_are_exact_against_the_fakes_own_counts(
    case: Case, played: Played
) -> None:
    judgement, lines = judged(case, played)
    for item in judgement.breaks:
        previous_prompt, _ = usage_of(lines, item.previous)
        prompt, cached = usage_of(lines, item.index)
        profile = FakeProvider(case.profile).profile
        if case.profile == "anthropic":
            # the previous request wrote a breakpoint at its end: a pure
            # append would have read every one of its tokens
            assert item.lost == previous_prompt - cached > 0
            continue
        if item.cause == "model-change":
            assert item.lost == cache_rule(profile, previous_prompt, prompt, "x")
            continue
        pure_append = cache_rule(profile, previous_prompt, prompt, "deepseek-chat")
        assert item.lost == pure_append - cached


def test_a_break_the_user_declares_is_expected(played: Played) -> None:
    case = next(c for c in CASES if c.harness == "system_edited")
    lines, starts = played(case)
    plain = judge_cache(read_capture_lines(lines), starts=starts)
    (broken,) = plain.breaks
    declared = judge_cache(
        read_capture_lines(lines), starts=starts, expected={broken.index: "a /model"}
    )
    assert declared.breaks[0].expected == "a /model"
    assert cache_status(declared) == 0
