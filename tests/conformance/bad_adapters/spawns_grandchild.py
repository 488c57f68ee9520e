"""Starts a helper process that inherits stdout and stderr and outlives the
adapter (20 s), then serves like the reference; with ``--hang`` it never
answers at all. The helper keeps the adapter's pipes open after the adapter
itself is gone, so the suite must end the adapter's whole process group,
and never wait on pipes a leftover process holds. The helper's pid is
written to ``grandchild.pid`` in the folder named by REQFOLD_BAD_STATE."""

import os
import subprocess
import sys
import threading
from pathlib import Path

from _serve import serve_broken

helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(20)"])
state = Path(os.environ["REQFOLD_BAD_STATE"])
(state / "grandchild.pid").write_text(str(helper.pid))
if "--hang" in sys.argv:
    threading.Event().wait()
serve_broken({})
