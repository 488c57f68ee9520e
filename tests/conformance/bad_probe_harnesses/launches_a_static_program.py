"""A launcher, as Codex's Node one is: it starts a statically linked
program (argument 1, built by the test), runs the harness command after
``--`` (its requests), and exits with the harness's status once both
ended. A preloaded clock never reaches the static program, so ``reqfold
probe --perturb next-day`` must skip ("not judged"), never pass."""

from __future__ import annotations

import subprocess
import sys

static, separator, *command = sys.argv[1:]
assert separator == "--", "usage: launches_a_static_program.py STATIC -- COMMAND"
helper = subprocess.Popen([static])
status = subprocess.call(command)
helper.wait()
sys.exit(status)
