"""Correct, but before answering initialize it writes one 16 MiB line to
stderr (a runtime dumping a huge object) and then a short one. stderr is
never a failure, and the suite keeps only a bounded tail of it: long lines
are truncated."""

import sys
from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

original = adapter.METHODS["initialize"]


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    sys.stderr.write("x" * (16 * 1024 * 1024) + "\n")
    sys.stderr.write("after the big line\n")
    sys.stderr.flush()
    return original(params)


serve_broken({"initialize": initialize})
