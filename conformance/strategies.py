"""Hypothesis strategies for the contract's values: headers, deltas, logs.

Public so the suite can drive differential tests of other implementations
against the reference with the same generators the reference is tested
with. Strategies are named for what they produce.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from reference.revisions import LATEST, Revision

_NAMES = ("read", "write", "grep", "bash", "echo", "lookup")
_LINES = ("", "a", "b", "You are helpful.", "Use tools.", "x\r", "  indented")


def system_prompts() -> st.SearchStrategy[str]:
    """System prompts built from a small line alphabet, so edits repeat lines."""
    return st.lists(st.sampled_from(_LINES), max_size=6).map("\n".join)


def tool_schemas(name: str) -> st.SearchStrategy[dict[str, Any]]:
    """A tool schema with the given name and a varying description."""
    return st.builds(
        lambda description, required: {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "required": required},
        },
        st.sampled_from(["", "v1", "v2"]),
        st.lists(st.sampled_from(["path", "query"]), max_size=2, unique=True),
    )


def tool_lists() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Tool lists with unique names in any order."""
    return st.lists(st.sampled_from(_NAMES), unique=True, max_size=5).flatmap(
        lambda names: st.tuples(*(tool_schemas(n) for n in names)).map(list)
    )


def configs() -> st.SearchStrategy[dict[str, Any]]:
    """Call configs with optional sampling members (``stop: []`` included)."""
    return st.fixed_dictionaries(
        {"model": st.sampled_from(["m1", "m2"])},
        optional={
            "temperature": st.sampled_from([0, 0.5, 1.0]),
            "maxTokens": st.sampled_from([1, 256]),
            "stop": st.lists(st.sampled_from(["<END>", "\n"]), max_size=2),
        },
    )


def message_lists() -> st.SearchStrategy[list[dict[str, Any]]]:
    """Short lists of framing messages."""
    message = st.builds(
        lambda text: {"role": "user", "content": [{"type": "text", "text": text}]},
        st.sampled_from(["opener", "catalog", "reminder"]),
    )
    return st.lists(message, max_size=2)


def headers(revision: Revision = LATEST) -> st.SearchStrategy[dict[str, Any]]:
    """Headers of `revision`, canonical or not (empty fields appear)."""
    optional: dict[str, st.SearchStrategy[Any]] = {
        "system": system_prompts(),
        "tools": tool_lists(),
    }
    for field in revision.message_fields:
        optional[field] = message_lists()
    return st.fixed_dictionaries({"config": configs()}, optional=optional)


def header_sequences(
    revision: Revision = LATEST, *, min_size: int = 1, max_size: int = 6
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Sequences of headers, as the requests of one session would carry."""
    return st.lists(headers(revision), min_size=min_size, max_size=max_size)
