"""Real harnesses from npm, judged on the cache from their requests alone.

Runs only on request (`REQFOLD_REAL_HARNESSES=1`: each drives a harness
for about a minute) and where the harness and `faketime` are installed (CI
does not install them: the tests skip and say so). What they show is written up in
docs/cache.md ("On real harnesses"), measured with pi 0.73.1 and opencode
1.18.33; a later version that changes its prompts may change the causes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from field_harnesses import available, drive

from reqfold.conformance.cache import judge_cache, read_capture_lines

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("name", "streams"), [("pi", ["main"]), ("opencode", ["main", "side 1"])]
)
@pytest.mark.spec("CACHE-3", "CACHE-2", "STREAM-2", "STREAM-1")
def test_a_real_harness_loses_its_cache_on_the_next_day_and_only_then(
    name: str, streams: list[str], tmp_path: Path
) -> None:
    if os.environ.get("REQFOLD_REAL_HARNESSES") != "1":
        pytest.skip(
            "real harnesses run on request (a minute each): REQFOLD_REAL_HARNESSES=1"
        )
    missing = available(name)
    if missing is not None:
        pytest.skip(f"{name} is driven only where it is installed ({missing})")
    lines, starts = drive(name, tmp_path, turns=2)
    judgement = judge_cache(read_capture_lines(lines), starts=starts)
    assert [s.name for s in judgement.streams] == streams
    (broken,) = judgement.breaks
    first_tomorrow = next(s.first_index for s in starts if s.name.startswith("3:"))
    assert broken.index >= first_tomorrow
    assert (broken.cause, broken.across, broken.stream) == (
        "date-time",
        "resume",
        "main",
    )
    assert broken.lost > 0
    outcomes = {f.id: f.outcome.value for f in judgement.findings}
    assert outcomes["cache/fresh-session-keeps-opening"] == "pass"
    assert outcomes["cache/resume-extends"] == "warn"
