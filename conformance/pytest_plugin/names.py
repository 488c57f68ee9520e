"""The names the plugin's parts share: its marker and its warning class.

A module of its own, so the parts import it and never the package's
entry point (`reqfold.conformance.pytest_plugin`), which imports them lazily.
"""

from __future__ import annotations

MARKER = "reqfold_rule"
"""The marker every reqfold item carries: its rule IDs, and ``level=``."""


class ReqfoldShouldWarning(UserWarning):
    """A check found a SHOULD rule broken: reported, not failed (unless strict).

    Filter it by this name (``reqfold.conformance.pytest_plugin.ReqfoldShouldWarning``)
    to keep it a warning in a run whose warnings are errors.
    """
