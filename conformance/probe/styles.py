"""How a harness is driven and when it is ready: the declarative parts (pure).

Three driver styles (docs/probe.md, "Drivers"):

- ``lines``: one process per session, one line per turn on stdin (the
  original style);
- ``process``: one process per turn, from a first-turn command and a
  next-turn command whose placeholders (``{prompt}``, ``{prompt_file}``,
  ...) are filled per turn; stdin is closed at once (``pi -p`` reads it to
  its end);
- ``jsonl``: one process per session, each turn written as one JSON line
  made from a template, and a turn ends when an output line matches.

Readiness (``--ready-when``) gates the first input of a process on a
signal that does not race: a text on stdout or stderr, a file appearing,
the log changing, or (last resort) a settle time with no output.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

STYLES = ("lines", "process", "jsonl")
READY_KINDS = ("stdout", "stderr", "file", "log", "settle")


@dataclass(frozen=True, slots=True)
class LineMatch:
    """An output line that ends a turn: a JSON object whose members at the
    given dotted paths equal the given values (all of them)."""

    wanted: tuple[tuple[tuple[str, ...], Any], ...]

    def matches(self, line: bytes) -> bool:
        """Whether this output line is one that ends a turn."""
        text = line.strip()
        if not text.startswith(b"{"):
            return False
        try:
            value = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            return False
        return all(_at(value, path) == (True, want) for path, want in self.wanted)

    def describe(self) -> str:
        """As the user wrote it, for messages."""
        return ",".join(
            f"{'.'.join(path)}={json.dumps(want)}" for path, want in self.wanted
        )


def _at(value: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for name in path:
        if not isinstance(value, dict) or name not in value:
            return False, None
        value = value[name]
    return True, value


def parse_line_match(text: str) -> LineMatch:
    """``type=agent_end`` or ``type=result,subtype=success``; a value is JSON
    when it parses as JSON, else a string. ValueError says what is wrong."""
    wanted = []
    for part in text.split(","):
        path, sep, raw = part.partition("=")
        if not sep or not path.strip():
            raise ValueError(
                f"--turn-end {text!r}: give PATH=VALUE pairs, e.g. type=agent_end"
            )
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        wanted.append((tuple(path.strip().split(".")), value))
    return LineMatch(tuple(wanted))


def check_send_template(template: str) -> None:
    """A --send template is one JSON object with ``"{prompt}"`` in it."""
    if '"{prompt}"' not in template:
        raise ValueError(
            f'--send {template!r} has no "{{prompt}}" (a JSON string member to fill)'
        )
    try:
        value = json.loads(template)
    except ValueError as error:
        raise ValueError(f"--send {template!r} is not JSON: {error}") from None
    if not isinstance(value, dict):
        raise ValueError(f"--send {template!r} is not a JSON object")


def send_line(template: str, prompt: str) -> str:
    """The JSON line for one turn: ``"{prompt}"`` replaced by the prompt as a
    JSON string. A prompt that is itself a JSON object (a command such as
    ``{"type": "compact"}``) is sent as it is."""
    if prompt.startswith("{"):
        try:
            if isinstance(json.loads(prompt), dict):
                return prompt
        except ValueError:
            pass
    return template.replace('"{prompt}"', json.dumps(prompt, ensure_ascii=False))


@dataclass(frozen=True, slots=True)
class Readiness:
    """What the probe waits for before a process's first input."""

    kind: str
    value: str = ""
    seconds: float = 0.0

    def describe(self) -> str:
        """For messages."""
        if self.kind == "settle":
            return f"{self.seconds:g} s with no output"
        if self.kind == "log":
            return "its log to change"
        if self.kind == "file":
            return f"the file {self.value!r} to appear"
        return f"{self.value!r} on {self.kind}"


def parse_readiness(text: str) -> Readiness:
    """``stdout:TEXT``, ``stderr:TEXT``, ``file:PATH``, ``log`` or
    ``settle:SECONDS``; ValueError says what is wrong."""
    kind, _, value = text.partition(":")
    if kind not in READY_KINDS:
        raise ValueError(
            f"--ready-when {text!r}: give one of stdout:TEXT, stderr:TEXT,"
            " file:PATH, log, settle:SECONDS"
        )
    if kind == "log":
        if value:
            raise ValueError(f"--ready-when {text!r}: 'log' takes no value")
        return Readiness("log")
    if not value:
        raise ValueError(f"--ready-when {text!r}: {kind}: needs a value")
    if kind == "settle":
        try:
            seconds = float(value)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= 600:
            raise ValueError(
                f"--ready-when {text!r}: settle takes seconds, more than 0, at most 600"
            )
        return Readiness("settle", seconds=seconds)
    return Readiness(kind, value)


def fill_all(text: str, values: Mapping[str, str]) -> str:
    """Replace each ``{name}`` of `values` in `text` (unknown braces stay)."""
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text
