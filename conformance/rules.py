"""The rule registry: every requirement of docs/spec.md, by ID.

The spec is the single source: a rule is a list item that starts with a
bold code-span ID, ``- **`HDR-1`** (MUST; all) text``. This module parses
those items so vectors, checks and tests can name rules and a test can
prove the mapping complete.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from reqfold.reference.revisions import Revision

_RULE = re.compile(
    r"^- \*\*`(?P<id>[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-\d+)`\*\* "
    r"\((?P<level>MUST NOT|MUST|SHOULD NOT|SHOULD|MAY); (?P<revisions>[a-z, -]+)\) "
    r"(?P<text>.*)$"
)
_SECTION = re.compile(r"^## (?P<title>.+)$")
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One requirement: its ID, level, revisions, section and text."""

    id: str
    level: str
    revisions: tuple[Revision, ...]
    section: str
    text: str

    @property
    def is_must(self) -> bool:
        """True for MUST and MUST NOT rules, whose breach is a failure."""
        return self.level in ("MUST", "MUST NOT")

    def applies_to(self, revision: Revision) -> bool:
        """True when the rule holds in `revision`."""
        return revision in self.revisions


def spec_path() -> Path:
    """Where docs/spec.md is: ``reqfold/docs/`` in the wheel, ``docs/`` in a checkout.

    Both are two folders above this module once links are resolved (in the
    checkout ``src/reqfold/conformance`` is a link to ``conformance/``).
    """
    return Path(__file__).resolve().parent.parent / "docs" / "spec.md"


def parse_rules(text: str) -> dict[str, Rule]:
    """Parse the rules out of spec text; raises ValueError on a malformed rule."""
    rules: dict[str, Rule] = {}
    section = ""
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        if heading := _SECTION.match(line):
            section = heading["title"]
            continue
        if not line.startswith("- **`"):
            continue
        match = _RULE.match(line)
        if match is None:
            raise ValueError(f"spec line {number}: malformed rule item: {line[:60]}")
        rule_id = match["id"]
        if rule_id.startswith("EXAMPLE-"):
            continue
        if rule_id in rules:
            raise ValueError(f"spec line {number}: rule {rule_id} defined twice")
        names = [n.strip() for n in match["revisions"].split(",")]
        revisions = (
            tuple(Revision) if names == ["all"] else tuple(Revision(n) for n in names)
        )
        body = [match["text"]]
        for following in lines[number:]:
            if not following.startswith("  ") or not following.strip():
                break
            body.append(following.strip())
        rules[rule_id] = Rule(
            id=rule_id,
            level=match["level"],
            revisions=revisions,
            section=section,
            text=" ".join(body),
        )
    return rules


@cache
def load_rules() -> dict[str, Rule]:
    """The rules of the spec this package ships with."""
    return parse_rules(spec_path().read_text(encoding="utf-8"))
