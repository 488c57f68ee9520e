"""The turns a probe feeds, and the commands it runs (pure).

A turns file holds one user turn per line; blank lines and lines starting
with ``#`` are skipped. With a resume command, a line ``---`` separates the
turns of the first process from those of the resumed one; without it the
last turn goes to the resumed process.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass

DEFAULT_TURNS = (
    "Hello! In one sentence, who are you?",
    "Name three primary colours.",
    "Which of them is the warmest?",
)
"""The turns fed when no --turns file is given."""

RESUME_MARK = "---"
PLACEHOLDERS = ("{session_id}", "{log_path}", "{log_dir}")


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """The turns of the first process and of the resumed one (empty: none)."""

    first: tuple[str, ...]
    resumed: tuple[str, ...] = ()


def plan_turns(text: str | None, *, resume: bool) -> TurnPlan:
    """Split a turns file (None: the defaults); ValueError says what is wrong."""
    lines = DEFAULT_TURNS if text is None else tuple(text.splitlines())
    turns = [line.strip() for line in lines]
    turns = [turn for turn in turns if turn and not turn.startswith("#")]
    if RESUME_MARK in turns:
        if not resume:
            raise ValueError(
                f"the turns file has a {RESUME_MARK!r} line but no --resume-cmd"
            )
        cut = turns.index(RESUME_MARK)
        first, resumed = turns[:cut], turns[cut + 1 :]
        if RESUME_MARK in resumed:
            raise ValueError(f"the turns file has more than one {RESUME_MARK!r} line")
    elif resume:
        if len(turns) < 2:
            raise ValueError(
                "with --resume-cmd give two or more turns (the last goes to the"
                f" resumed process), or split them with a {RESUME_MARK!r} line"
            )
        first, resumed = turns[:-1], turns[-1:]
    else:
        first, resumed = turns, []
    if not first:
        raise ValueError("no turn to feed the harness (the turns file is empty)")
    if resume and not resumed:
        raise ValueError("no turn left for the resumed process (give two or more)")
    return TurnPlan(tuple(first), tuple(resumed))


def split_command(command: str, option: str) -> list[str]:
    """A command split like a shell would; ValueError names the option."""
    try:
        argv = shlex.split(command)
    except ValueError as error:
        raise ValueError(
            f"{option} cannot be split like a shell would: {error}"
        ) from None
    if not argv:
        raise ValueError(f"{option} is empty: give the harness command")
    return argv


def fill(argv: list[str], values: Mapping[str, str]) -> list[str]:
    """Replace ``{session_id}``, ``{log_path}`` and ``{log_dir}`` in each word."""
    filled = []
    for word in argv:
        for name, value in values.items():
            word = word.replace("{" + name + "}", value)
        filled.append(word)
    return filled
