"""Starts a helper in a session of its own (``setsid``) that inherits stdout
and stderr and would outlive the adapter by a minute, then serves like the
reference, except that it exits with status 3 whenever it is asked to fold.

The helper is out of the adapter's process group, so killing the group
misses it, and it keeps the pipes open after each crash: the suite must see
the crash at once (not wait out --timeout for an end of stdout that never
comes), kill the helper anyway, and not keep a reader per crash. Each
helper's pid is written as ``detached-PID`` in the folder named by
REQFOLD_BAD_STATE. With ``--clear-env`` the helper also starts with an
empty environment, so only the pipes it holds tie it to the adapter."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from _serve import serve_broken

helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(60)"],
    start_new_session=True,
    env={} if "--clear-env" in sys.argv else None,
)
(Path(os.environ["REQFOLD_BAD_STATE"]) / f"detached-{helper.pid}").touch()


def fold(params: dict[str, Any]) -> dict[str, Any]:
    os._exit(3)


serve_broken({"codec/fold": fold})
