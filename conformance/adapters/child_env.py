"""What to say when an implementation's Python cannot import reqfold.

A command such as ``python3 bad_harness.py`` names a Python by ``PATH``:
the system's may lack reqfold while the one running reqfold (a venv's)
has it. The implementation runs with the user's own environment,
unchanged (a harness's ``python3`` may need packages only the user's
Python has), so such a failure gets a hint naming reqfold's Python.
"""

from __future__ import annotations

import sys

MISSING_REQFOLD = "No module named 'reqfold'"
"""What a Python child says on stderr when it cannot import reqfold."""


def missing_reqfold_hint(stderr_tail: str, executable: str = sys.executable) -> str:
    """A hint when a child's stderr shows it could not import reqfold ("" if not)."""
    if MISSING_REQFOLD not in stderr_tail:
        return ""
    return (
        "; hint: the implementation's Python cannot import reqfold: run it"
        f" with {executable} (the Python that runs reqfold), or install"
        " reqfold where its Python finds it"
    )
