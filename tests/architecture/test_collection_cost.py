"""What every pytest process pays before its first test stays small.

Each xdist worker imports every test module and keeps what it collected
until the session ends (docs/test-suite.md): a heavy import at the top of
a test module is paid once per worker, and what collection leaves behind
is frozen so that the garbage collector does not walk it again and again.
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path

import pytest
from lazy_sdk import LazySdk

TESTS = Path(__file__).resolve().parents[1]
SDKS = ("openai", "anthropic")
"""The official SDKs some tests drive: 0.5 s and 1.3 s of CPU to import."""


def test_no_test_module_imports_a_providers_sdk_at_its_top() -> None:
    eager = re.compile(
        rf"^(?:import ({'|'.join(SDKS)})\b|from ({'|'.join(SDKS)})\b"
        rf"|\w+ = pytest\.importorskip\(\"({'|'.join(SDKS)})\"\))",
        re.M,
    )
    found = [
        f"{path.relative_to(TESTS)}: {match.group(0)}"
        for path in sorted(TESTS.rglob("*.py"))
        for match in eager.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == [], "use lazy_sdk.LazySdk instead"


def test_a_lazy_sdk_gives_what_the_module_has_once_a_test_reads_it() -> None:
    assert LazySdk("json").dumps is json.dumps


def test_pytests_own_questions_to_a_lazy_sdk_import_nothing() -> None:
    absent = LazySdk("reqfold_no_such_sdk")
    # what the collector asks of every name in a test module
    assert getattr(absent, "__test__", True) is True
    assert not hasattr(absent, "_pytestfixturefunction")


def test_a_test_that_reads_a_missing_sdk_is_skipped_saying_which() -> None:
    absent = LazySdk("reqfold_no_such_sdk")
    with pytest.raises(pytest.skip.Exception, match="reqfold_no_such_sdk"):
        absent.Client  # noqa: B018


def test_what_collection_made_is_out_of_the_garbage_collectors_sight() -> None:
    assert gc.get_freeze_count() > 10_000
