"""A chat harness that greets and then waits for the end of its input, never
printing the prompt ``--ready`` names. ``reqfold probe --ready "> "`` must
feed it nothing and fail CHECK-3 once ``--timeout`` has passed, once."""

from __future__ import annotations

import sys

print("hello, no prompt here", flush=True)
sys.stdin.read()
