"""Answers ``initialize`` with a value that is cheap to send and was costly
to validate. ``python answers_initialize_hugely.py MODE``:

* ``objects``: 8,000 distinct objects in ``revisions`` (a 200 KB line),
  which a quadratic ``uniqueItems`` compares pair by pair for minutes;
* ``bad-items``: ``capabilities`` of a million numbers (a 3 MB line), each
  an error of its own, which collecting before reporting costs gigabytes.
"""

import sys
from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

REFERENCE_INITIALIZE = adapter.METHODS["initialize"]
MODE = sys.argv[1]


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    identity = REFERENCE_INITIALIZE(params)
    if MODE == "objects":
        return {**identity, "revisions": [{"n": n} for n in range(8000)]}
    return {**identity, "capabilities": [1] * 1_000_000}


serve_broken({"initialize": initialize})
