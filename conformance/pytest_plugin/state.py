"""What one pytest process keeps for the suite: the options, the plan, the codec.

The plan is made once per session, where collection needs it; an xdist
worker takes the one its controller made (`WORKER_KEY`) instead of playing
the scenarios again. The codec implementation is started when the first
vector item of this process runs, and closed when pytest ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from reqfold.conformance.pytest_plugin.codec import CodecSession
from reqfold.conformance.pytest_plugin.plan import Options, Plan, make_plan

WORKER_KEY = "reqfold_plan"
"""Where the xdist controller puts the plan in each worker's input."""


@dataclass(slots=True)
class SuiteState:
    """The suite's part of one pytest process (module docstring)."""

    options: Options
    expected: dict[str, str] = field(default_factory=dict)
    """Expected failures: check id -> reason (``--reqfold-expected-failures``)."""
    _plan: Plan | None = None
    _codec: CodecSession | None = None

    def plan(self, config: pytest.Config) -> Plan:
        """The session's plan: the controller's, or made here once."""
        if self._plan is None:
            workerinput = getattr(config, "workerinput", None)
            given = workerinput.get(WORKER_KEY) if workerinput is not None else None
            if given is None:
                self._plan = make_plan(self.options)
            else:
                try:
                    self._plan = Plan.load(given)
                except ValueError as error:  # a collection error, in one line
                    self._plan = Plan(
                        error=f"the plan from the xdist controller cannot be read:"
                        f" {error}"
                    )
        return self._plan

    def made_plan(self) -> Plan | None:
        """The plan, if this process has one yet."""
        return self._plan

    def codec(self) -> CodecSession:
        """This process's codec implementation, started on first use."""
        if self._codec is None:
            from reqfold.conformance.adapters.lifecycle import codec_connector

            self._codec = CodecSession(
                codec_connector(self.options.impl, self.options.timeout)
            )
        return self._codec

    def close(self) -> None:
        """Close the codec implementation, if one was started."""
        if self._codec is not None:
            self._codec.close()


STATE_KEY = pytest.StashKey[SuiteState]()
"""Where the state lives on the pytest config."""
