"""The names of the causes the cache judgement gives a break.

Apart from `reqfold.conformance.cache.causes`, which reads a cause from two
rendered prompts and so imports the fake's prompt rendering: these names
are all a command line needs (`--fail-on` takes them), and declaring the
options must not import the fake (`reqfold check LOG` never uses it).
"""

from __future__ import annotations

CAUSES = (
    "model-change",
    "parameters",
    "tools-added",
    "tools-removed",
    "tools-reordered",
    "tool-changed",
    "cache-markers",
    "shape-only",
    "date-time",
    "nonce",
    "environment",
    "system-edited",
    "reasoning-stripped",
    "tool-output-truncated",
    "messages-dropped",
    "summary-inserted",
    "conversation-cleared",
    "message-edited",
    "new-opening",
    "unclassified",
)
"""Every cause the judgement names (`--fail-on` takes these)."""
