"""Exits with status 3 whenever it is asked to fold: every fold case is an
error (no verdict), every other case still passes after a restart."""

import os
from typing import Any

from _serve import serve_broken


def fold(params: dict[str, Any]) -> dict[str, Any]:
    os._exit(3)


serve_broken({"codec/fold": fold})
