"""One registry of dialects: every name a profile may give has a profile and
a table entry, and every provider path belongs to one dialect."""

from __future__ import annotations

from reqfold.fakes.dialects.table import DIALECTS, dialect_serving
from reqfold.fakes.profiles import DIALECT_NAMES, PROFILES
from reqfold.fakes.provider import served_paths


def test_every_dialect_name_has_one_profile_and_one_table_entry() -> None:
    assert set(DIALECT_NAMES) == set(PROFILES) == set(DIALECTS)
    assert all(PROFILES[name].dialect == name for name in DIALECT_NAMES)


def test_each_provider_path_is_served_by_one_dialect_family_and_named() -> None:
    for dialect in DIALECTS.values():
        for path in dialect.paths:
            serving = dialect_serving(path)
            assert serving is not None
            assert serving.family == dialect.family
            assert f"POST {path}" in served_paths(dialect.paths)
    assert dialect_serving("/v1/responses") is DIALECTS["openai-responses"]


def test_the_served_paths_of_an_error_name_each_path_once() -> None:
    assert served_paths(("/v1/responses", "/responses", "/v1/responses")) == (
        "POST /v1/responses, POST /responses"
    )
