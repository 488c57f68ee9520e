"""Import boundaries: reference/ stands alone and its pure core does no I/O."""

from __future__ import annotations

from pathlib import Path

import pytest
from import_names import imported_names
from reference_layout import top_modules

from reqfold import reference

ROOT = Path(reference.__file__).resolve().parent
PURE = [path.relative_to(ROOT).as_posix() for path in top_modules(ROOT)] + [
    "loop/freeze.py"
]
"""The top of reference/ (launchers aside: `reference_layout`) and the
loop's one pure module."""
IMPURE = {"asyncio", "httpx", "time", "random", "socket", "subprocess", "uuid"}


def imported_modules(path):
    return imported_names(path)


def test_reference_is_imported_from_this_checkout():
    assert ROOT.parent == Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "path", sorted(ROOT.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT))
)
def test_reference_never_imports_the_suite_or_the_fakes(path):
    roots = {name.split(".")[0] for name in imported_modules(path)}
    assert not roots & {"conformance", "fakes"}


@pytest.mark.parametrize("name", PURE)
def test_the_pure_codec_modules_do_no_io(name):
    roots = {module.split(".")[0] for module in imported_modules(ROOT / name)}
    assert not roots & IMPURE
