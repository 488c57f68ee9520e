"""The cache judgement's options, declared once: ``reqfold check`` (with
``--requests``) and ``reqfold probe`` both take them, so neither shell
imports the other's.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from reqfold.conformance.cache.cause_names import CAUSES

if TYPE_CHECKING:  # the model is imported when a --process-start is read
    from reqfold.conformance.cache.model import ProcessKind, ProcessStart

KINDS: tuple[ProcessKind, ...] = ("resume", "fresh")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The cache judgement's options (``reqfold check`` and ``reqfold probe``)."""
    group = parser.add_argument_group(
        "the cache judged from requests alone (--requests and no log)"
    )
    group.add_argument(
        "--process-start",
        action="append",
        default=[],
        type=process_start,
        metavar="INDEX[:resume|fresh]",
        help="a harness process started with the request of this capture index"
        " (resume: it continues the session before; fresh: a new session in the"
        " same project); repeatable. Without it, a change of API key starts a"
        " resumed process",
    )
    group.add_argument(
        "--expect-break",
        action="append",
        default=[],
        type=expected_break,
        metavar="INDEX[=WHY]",
        help="the request of this index may break the cache (a compaction, a model"
        " switch, a /clear); repeatable",
    )
    group.add_argument(
        "--expect-breaks",
        metavar="FILE",
        help="the requests that may break the cache, one JSON object a line:"
        ' {"index": N, "why": "..."} (an --expect-break for the same index wins)',
    )
    group.add_argument(
        "--price",
        type=prices,
        metavar="UNCACHED,CACHED",
        help="prices per million input tokens, uncached and cached: the tokens"
        " lost are also given as a cost",
    )
    add_gate_arguments(group)


def add_gate_arguments(group: argparse._ActionsContainer) -> None:
    """``--fail-on`` and ``--max-lost-tokens``: CI gates stricter than the spec."""
    group.add_argument(
        "--fail-on",
        type=causes,
        default=(),
        metavar="CAUSE,...",
        help="fail on any break with one of these causes (" + ", ".join(CAUSES) + ")",
    )
    group.add_argument(
        "--max-lost-tokens",
        type=non_negative,
        metavar="N",
        help="fail when the breaks lose more than N tokens against a pure append",
    )


def process_start(text: str) -> ProcessStart:
    """``INDEX`` or ``INDEX:resume`` or ``INDEX:fresh``."""
    index, _, kind = text.partition(":")
    kind = kind or "resume"
    if not index.isdigit() or kind not in KINDS:
        raise argparse.ArgumentTypeError(f"expected INDEX[:resume|fresh], got {text!r}")
    from reqfold.conformance.cache.model import ProcessStart

    return ProcessStart(
        first_index=int(index),
        name="",
        kind="resume" if kind == "resume" else "fresh",
    )


def expected_break(text: str) -> tuple[int, str]:
    """``INDEX`` or ``INDEX=WHY``."""
    index, _, why = text.partition("=")
    if not index.isdigit():
        raise argparse.ArgumentTypeError(f"expected INDEX[=WHY], got {text!r}")
    return int(index), why or "declared with --expect-break"


def causes(text: str) -> tuple[str, ...]:
    """A comma-separated list of cause names."""
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in CAUSES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown cause(s) {', '.join(unknown) or text!r}; known: "
            + ", ".join(CAUSES)
        )
    return names


def prices(text: str) -> tuple[float, float]:
    """``UNCACHED,CACHED``: two prices per million input tokens."""
    try:
        uncached, cached = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected UNCACHED,CACHED (prices per million tokens), got {text!r}"
        ) from None
    if not (0 <= cached <= uncached < float("inf")):
        raise argparse.ArgumentTypeError(
            f"expected 0 <= CACHED <= UNCACHED, finite, got {text!r}"
        )
    return uncached, cached


def non_negative(text: str) -> int:
    """A whole number of tokens, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of tokens, got {text!r}")
    return int(text)
