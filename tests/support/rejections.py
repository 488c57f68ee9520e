"""`rejects`: assert an error by its kind, rule ID and seq, never its wording.

A wrong rule ID is a wrong diagnosis for the user (docs/adapter-protocol.md
promises error data ``{kind, rule, seq}``), and message wording is not a
rule: the reference's tests pin the first and leave the second free.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from reqfold.reference.errors import CodecError


@contextmanager
def rejects(
    kind: type[CodecError], rule: str, *, seq: int | None = None
) -> Iterator[pytest.ExceptionInfo[CodecError]]:
    """Expect exactly a `kind` error naming `rule` and `seq` (None: no seq),
    with a message of some words (which words is free)."""
    with pytest.raises(CodecError) as caught:
        yield caught
    error = caught.value
    got = (type(error).__name__, error.rule, error.seq)
    assert got == (kind.__name__, rule, seq), f"{got} raised: {error}"
    # Whatever the words, there are some: an error explains itself.
    assert isinstance(error.detail, str), f"no message: {error!r}"
    assert error.detail.strip(), f"an empty message: {error!r}"
