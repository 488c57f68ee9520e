"""Not bad: the reference codec declaring only the session-prefix revision.

Used to show that asking `reqfold run` for a revision an implementation
does not declare is a usage error (exit 2), not "could not be run".
"""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

_initialize = adapter.METHODS["initialize"]


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    return {**_initialize(params), "revisions": ["session-prefix"]}


serve_broken({"initialize": initialize})
