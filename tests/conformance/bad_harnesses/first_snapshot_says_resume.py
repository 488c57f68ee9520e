"""The writer names an instance's first snapshot ``resume`` even in a new
session, where no header event came before it and it must say
``initial``. Caught by ``plain-turns``: ``anchor/i1`` [WRITER-1] and the
checker's ``log/WRITER-6`` (a log's first header event is ``initial``)."""

from typing import Any

from reqfold.reference.loop import agent
from reqfold.reference.shells.harness_adapter import main
from reqfold.reference.writer import record_header


def record_header_resume(*args: Any, **kwargs: Any) -> Any:
    event = record_header(*args, **kwargs)
    if event is not None and event["data"].get("reason") == "initial":
        event["data"]["reason"] = "resume"
    return event


agent.record_header = record_header_resume
raise SystemExit(main())
