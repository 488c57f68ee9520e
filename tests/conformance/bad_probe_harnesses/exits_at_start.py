"""A chat harness that starts, says why it cannot go on, and exits 1 before
reading a line. ``reqfold probe`` must fail CHECK-3 whether it paces the
turns by the log or by a ``--ready`` prompt (it started: a verdict)."""

from __future__ import annotations

import sys

print("starting", flush=True)
print("cannot load my configuration", file=sys.stderr)
sys.exit(1)
