"""Options ``reqfold run`` and ``reqfold probe`` share, declared in one place.

Both list their checks the same way and judge them with one verdict
(`reqfold.conformance.verdict`), so the option that chooses which checks are
listed is spelled, and documented in ``--help``, once.
"""

from __future__ import annotations

import argparse
from typing import Final

SHOW_MODES: Final = ("problems", "all")
"""``--show``: list only failing, warning and erroring checks, or every check."""


def add_show_argument(parser: argparse.ArgumentParser) -> None:
    """Declare ``--show`` (`SHOW_MODES`, default ``problems``)."""
    parser.add_argument(
        "--show",
        choices=SHOW_MODES,
        default="problems",
        help="list only failing, warning and erroring checks, or every check",
    )
