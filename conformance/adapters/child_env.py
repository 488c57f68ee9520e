"""The environment an implementation's command runs in.

A command such as ``python3 bad_harness.py`` names a Python by ``PATH``;
the system's may not have reqfold installed while the one running reqfold
(a venv's) does. So the implementation's ``PATH`` starts with the folder of
the Python that runs reqfold, unless it already holds that folder: then
``python3`` in an implementation's command is reqfold's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

MISSING_REQFOLD = "No module named 'reqfold'"
"""What a Python child says on stderr when it cannot import reqfold."""


def with_own_python_first(
    env: Mapping[str, str], executable: str = sys.executable
) -> dict[str, str]:
    """`env` with the folder of `executable` first on ``PATH`` (if not on it yet)."""
    result = dict(env)
    folder = os.path.dirname(executable)
    if not folder:
        return result
    entries = result.get("PATH", os.defpath).split(os.pathsep)
    if folder in entries:
        return result
    result["PATH"] = os.pathsep.join([folder, *(e for e in entries if e)])
    return result


def missing_reqfold_hint(stderr_tail: str, executable: str = sys.executable) -> str:
    """A hint when a child's stderr shows it could not import reqfold ("" if not)."""
    if MISSING_REQFOLD not in stderr_tail:
        return ""
    return (
        "; hint: the implementation's Python cannot import reqfold: run it"
        f" with {executable} (the Python that runs reqfold), or install"
        " reqfold where its Python finds it"
    )
