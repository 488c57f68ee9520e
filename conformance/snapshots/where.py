"""Where two serialized snapshots first differ, as a path into the data.

syrupy's diff shows the changed lines with a line of context, which is
enough to see *what* changed but not *where*: a changed word of the system
prompt looks the same in the log's header event and in every request.
`first_change` finds the first line that differs and names the member it
belongs to (``requests[2].body.messages[0].content``) by reading the Amber
text's structure: one member or item per line, containers opened by
``TYPE({`` or ``TYPE([`` and closed by ``})`` or ``])``, multi-line strings
between ``'''`` lines. syrupy's diff shows only a window around the first
change, so `changed_members` also names every member whose lines differ
(lines matched by `difflib`). Pure text in, text out.
"""

from __future__ import annotations

import ast
import difflib
import json
import re
from dataclasses import dataclass, field

_KEY = re.compile(r"""^('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"): (.*)$""")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Path = tuple[str | int, ...]


@dataclass(slots=True)
class _Frame:
    kind: str
    """``dict``, ``list`` or ``str`` (a multi-line string)."""
    path: Path
    indent: int
    items: int = field(default=0)


def line_paths(text: str) -> list[Path]:
    """The path of the member each line of an Amber serialization belongs to."""
    paths: list[Path] = []
    stack: list[_Frame] = []
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        top = stack[-1] if stack else None
        if top is not None and top.kind == "str":
            if stripped.rstrip(",") == "'''" and indent <= top.indent:
                stack.pop()
            paths.append(top.path)
            continue
        if top is not None and stripped[:1] in ("}", "]"):
            stack.pop()
            paths.append(top.path)
            continue
        rest = stripped
        path: Path = ()
        if top is not None:
            key: str | int = top.items
            if top.kind == "dict":
                match = _KEY.match(stripped)
                if match is not None:
                    key, rest = _literal(match.group(1)), match.group(2)
            top.items += 1
            path = (*top.path, key)
        if rest.endswith(("({", "([")):
            stack.append(_Frame("dict" if rest.endswith("{") else "list", path, indent))
        elif rest == "'''":
            stack.append(_Frame("str", path, indent))
        paths.append(path)
    return paths


def _literal(token: str) -> str:
    try:
        value = ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return token
    return value if isinstance(value, str) else token


def render_path(path: Path) -> str:
    """``log[3].data.header.system``; a key that is not a name is quoted."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENTIFIER.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text or "(the whole snapshot)"


def first_change(stored: str, received: str) -> tuple[int, str] | None:
    """The first differing line (1-based, in `received` when it has one) and
    the path of its member; None when the texts are the same."""
    old, new = stored.split("\n"), received.split("\n")
    index = next(
        (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
        min(len(old), len(new)),
    )
    if index == len(old) == len(new):
        return None
    lines, text = (new, received) if index < len(new) else (old, stored)
    index = min(index, len(lines) - 1)
    return index + 1, render_path(line_paths(text)[index])


def changed_members(stored: str, received: str) -> list[str]:
    """Every member whose lines differ, outermost first, in file order.

    A member inside one already named is left out (a new event is named,
    not each of its members).
    """
    old, new = stored.split("\n"), received.split("\n")
    old_paths, new_paths = line_paths(stored), line_paths(received)
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    found: list[Path] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            found.extend(old_paths[i1:i2])
            found.extend(new_paths[j1:j2])
    kept: list[Path] = []
    for path in found:
        if not any(path[: len(other)] == other for other in kept):
            kept = [other for other in kept if other[: len(path)] != path]
            kept.append(path)
    return [render_path(path) for path in kept]
