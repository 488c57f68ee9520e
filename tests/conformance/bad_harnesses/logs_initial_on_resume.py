"""The writer names every instance's first snapshot ``initial``, also on a
resumed instance whose log already has a header. Caught by the checker on
``resume-without-drift``: ``log/WRITER-6`` [WRITER-6]."""

from typing import Any

from reqfold.reference.loop import agent
from reqfold.reference.shells.harness_adapter import main
from reqfold.reference.writer import record_header


def record_header_initial(*args: Any, **kwargs: Any) -> Any:
    event = record_header(*args, **kwargs)
    if event is not None and event["data"].get("reason") == "resume":
        event["data"]["reason"] = "initial"
    return event


agent.record_header = record_header_initial
raise SystemExit(main())
