"""Every strict JSON reader of the project is named where the readers are
compared (`reqfold.conformance.report.refusing_json`'s docstring), so a
new one, or one overlooked, is either shared or said why not."""

from __future__ import annotations

from pathlib import Path

from reqfold.conformance.report import refusing_json

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ("object_pairs_hook", "parse_constant")
"""What a reader passes `json.loads` to refuse what plain JSON parsing lets by."""


def strict_readers() -> list[str]:
    """The modules of the three packages that hook `json.loads`, dotted."""
    return sorted(
        "reqfold." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for package in ("reference", "conformance", "fakes")
        for path in (ROOT / package).rglob("*.py")
        if any(hook in path.read_text(encoding="utf-8") for hook in HOOKS)
    )


SELF = "reqfold.conformance.report.refusing_json"


def test_the_comparison_of_the_strict_readers_names_every_one() -> None:
    readers = strict_readers()
    assert SELF in readers
    assert len(readers) >= 4
    compared = (refusing_json.__doc__ or "").replace("\n", "")
    assert [name for name in readers if name != SELF and name not in compared] == []
