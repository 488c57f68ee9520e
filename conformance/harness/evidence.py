"""The evidence a scenario run leaves: what the checks judge.

Plain data, filled by `reqfold.conformance.harness.driver` and read by the pure
`reqfold.conformance.harness.checks`: the log the harness wrote, the requests the
fake captured for the session (each with the instance that was running),
what each send did, and how often each contributor was called.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from reqfold.conformance.harness.scenarios import Scenario
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

if TYPE_CHECKING:  # a type only: importing fakes costs a run that plays nothing
    from reqfold.fakes import CapturedRequest


@dataclass(slots=True, kw_only=True)
class SendRecord:
    """What one ``instance/send`` did."""

    instance: str
    prompt: str
    turn: int | None
    reason: JsonObject
    captures_before: int
    """How many of the session's requests were captured before the send:
    its requests are ``captures[captures_before:captures_after]``."""
    captures_after: int
    """How many once its turn ended."""
    expect: JsonObject
    logged_before: int = 0
    """How many events the log held when the send was made: its turn's
    events come after them."""


@dataclass(slots=True, kw_only=True)
class Evidence:
    """Everything one scenario run left behind, for the checks."""

    scenario: Scenario
    revision: Revision
    log_path: Path
    log: bytes = b""
    """The log's bytes; empty when it is larger than the suite holds in
    memory (`log_file.MAX_LOG_IN_MEMORY`: then it is read from `log_path`)."""
    log_size: int = -1
    """The size in bytes of a log left on disk; -1 for one held whole."""
    captures: list[CapturedRequest] = field(default_factory=list)
    capture_instances: list[str] = field(default_factory=list)
    """The instance that was running when each capture arrived."""
    sends: list[SendRecord] = field(default_factory=list)
    calls: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Contributor calls per ``(instance, contributor)``."""
    unfired: list[str] = field(default_factory=list)
    """Reactions whose contributor call never started: the scenario did not
    run as scripted."""
    instance_starts: list[tuple[str, int]] = field(default_factory=list)
    """Each instance and how many events the log held when it started: its
    own events have seqs from there on (the log cannot say where an
    instance starts; the driver can)."""
    wire_compared: bool = True
    """Whether the captures are chat-completions requests the log's rebuild
    is compared with (a probe of another dialect: not; the log is then
    checked as ``reqfold check`` checks it without ``--requests``)."""

    @property
    def log_bytes(self) -> int:
        """The log's size, whether it is held in memory or not."""
        return len(self.log) if self.log_size < 0 else self.log_size

    @property
    def log_left_on_disk(self) -> bool:
        """Whether the log is too large to hold in memory: the checks that
        need its events together cannot run, the others read the file."""
        return not self.log and self.log_size > 0
