"""`reqfold fake serve` and `reqfold probe` list the dialects in one order,
the registry's; the probe's docs refer to that list instead of copying it."""

from __future__ import annotations

import re
from pathlib import Path

from cli_in_process import reqfold_here

from reqfold.fakes.dialects.registry import PROFILES

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _choices(*command: str) -> list[str]:
    status, out, err = reqfold_here(*command, "--help")
    assert status == 0, err
    found = re.search(r"--dialect \{([^}]*)\}", out)
    assert found is not None, out
    return found.group(1).split(",")


def test_fake_serve_and_probe_list_the_dialects_in_the_registry_s_order() -> None:
    assert _choices("fake", "serve") == list(PROFILES)
    assert _choices("probe") == list(PROFILES)


def test_the_probe_docs_refer_to_the_dialects_fake_serve_lists() -> None:
    text = (DOCS / "probe.md").read_text(encoding="utf-8")
    [row] = [line for line in text.splitlines() if line.startswith("| `--dialect")]
    assert "every dialect `reqfold fake serve` lists" in row
    assert "`openai-responses`" not in row
