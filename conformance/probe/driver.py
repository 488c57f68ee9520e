"""One probe session: run the harness, feed its turns, resume it, collect evidence.

The condition a turn is waited on (docs/probe.md, "Pacing"): after its line
is written, the turn is *handled* once the session log holds one more
``turn/end`` than before the line (with ``--ready TEXT``: once the harness
printed TEXT, its prompt, once more), no request is in flight at the fake,
and the harness has read everything written on its stdin. Only then is
the next line written, so a harness that reads ahead (buffers stdin)
still sees one turn at a time, and a cold start cannot batch two turns.
With ``--ready`` the first line also waits for the first prompt. Every
wait ends early when the harness exits, and gives up after the timeout:
then the harness and everything it started are killed. Whatever paced
the turns, the judge counts the turns the log shows at the end.

Waiting is on a condition the fake, the output readers and the exit
waiter notify; the log file, which nothing notifies, is read again at
each wake-up or every `POLL` seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reqfold.conformance.harness.log_file import read_log
from reqfold.conformance.probe.fake import ProbeFake
from reqfold.conformance.probe.harness import HarnessProcess
from reqfold.conformance.probe.logs import LogFinder, LogWatch, Mark
from reqfold.conformance.probe.turns import fill
from reqfold.fakes import CapturedRequest

POLL = 0.05
"""The longest wait between two looks at the log file (seconds)."""
STUCK_GRACE = 2.0
"""How long a harness that did not finish a turn may take to exit once its
input is closed (seconds; at most --timeout)."""
SCAN_EVERY = 0.25
"""How often the harness's process tree is scanned while it runs (seconds)."""


@dataclass(slots=True, kw_only=True)
class TurnRecord:
    """One fed turn: its text, and the session's captures before and after."""

    text: str
    captures_before: int
    captures_after: int = 0
    handled: bool = False


@dataclass(slots=True, kw_only=True)
class RunRecord:
    """One harness process of the probe."""

    name: str
    argv: list[str]
    key_digest: str
    first_request: int = 0
    """The fake's request index when the process started: without an API
    key to tell processes apart, its requests are those from here on (the
    processes run one after another)."""
    turns: list[TurnRecord] = field(default_factory=list)
    planned: int = 0
    events_before: int = 0
    start_error: str | None = None
    problem: str | None = None
    """Why the run stopped before all its turns were handled, if it did."""
    exit_status: int | None = None
    killed_at_end: bool = False
    turn_ends_before: int = 0
    turn_ends_after: int = 0
    """``turn/end`` events in the log before the process started and after
    it ended: the turns its log shows it handled."""
    output: str = ""

    @property
    def handled(self) -> int:
        """How many fed turns were handled."""
        return sum(1 for turn in self.turns if turn.handled)


@dataclass(slots=True, kw_only=True)
class ProbeEvidence:
    """What a probe session left: runs, the log, the captures."""

    runs: list[RunRecord] = field(default_factory=list)
    log_path: str | None = None
    log: bytes = b""
    """The log's bytes; empty when it is larger than the suite holds in
    memory (`log_file.MAX_LOG_IN_MEMORY`: then it is read from `log_path`)."""
    log_size: int = -1
    """The size in bytes of a log left on disk; -1 for one held whole."""
    other_logs: list[str] = field(default_factory=list)
    captures: list[CapturedRequest] = field(default_factory=list)
    capture_runs: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def has_log(self) -> bool:
        """Whether a log was found, held in memory or left on disk."""
        return self.log_path is not None and (bool(self.log) or self.log_size > 0)


@dataclass(slots=True, kw_only=True)
class ProbeSettings:
    """What the command line asked for."""

    command: list[str]
    resume_command: list[str] | None
    first_turns: tuple[str, ...]
    resumed_turns: tuple[str, ...]
    base_url_env: str
    api_key_env: str | None
    base_url_suffix: str
    finder: LogFinder
    log_dir: str
    timeout: float
    ready: str | None = None
    log_expected: bool = True
    """False when no log was looked for: the cache is judged alone, and a
    resume command runs without one."""


class ProbeDriver:
    """Runs one probe session against a served fake (`run`)."""

    def __init__(
        self,
        settings: ProbeSettings,
        fake: ProbeFake,
        *,
        on_progress: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.settings = settings
        self.fake = fake
        self.changed = fake.changed
        self.evidence = ProbeEvidence()
        self.watch: LogWatch | None = None
        self.current: HarnessProcess | None = None
        self.say = on_progress

    # ------------------------------------------------------------ the session

    def run(self) -> ProbeEvidence:
        """Run the first process, then the resumed one; gather the evidence."""
        settings = self.settings
        values = {"log_dir": settings.log_dir}
        first = self._run("run 1", fill(settings.command, values), settings.first_turns)
        resume = settings.resume_command
        if resume is not None and first.start_error is None:
            if self.watch is None and settings.log_expected:
                self.evidence.notes.append(
                    "the resume command was not run: the first process wrote no log"
                )
            else:
                values = {
                    **values,
                    "log_path": self.watch.path if self.watch else "",
                    "session_id": (self.watch.session_id if self.watch else "") or "",
                }
                self._run("run 2", fill(resume, values), settings.resumed_turns)
        self._collect()
        return self.evidence

    def stop(self) -> None:
        """End the running harness (on interruption)."""
        if self.current is not None:
            self.current.end()

    def _collect(self) -> None:
        evidence = self.evidence
        if self.watch is not None:
            evidence.log_path = self.watch.path
            read = read_log(self.watch.path)
            evidence.log = read.data
            evidence.log_size = read.size if read.left_on_disk else -1
        captures: list[CapturedRequest] = []
        for record in self.evidence.runs:
            mine = self._mine(record)
            captures.extend(mine)
            evidence.capture_runs.extend(record.name for _ in mine)
        evidence.captures = captures

    # ------------------------------------------------------------ one process

    def _env(self, key: str) -> dict[str, str]:
        settings = self.settings
        env = dict(os.environ)
        env[settings.base_url_env] = self.fake.url + settings.base_url_suffix
        if settings.api_key_env:
            env[settings.api_key_env] = key
        return env

    def _run(self, name: str, argv: list[str], turns: tuple[str, ...]) -> RunRecord:
        key, digest = self.fake.new_key()
        record = RunRecord(
            name=name,
            argv=argv,
            key_digest=digest,
            planned=len(turns),
            first_request=self.fake.next_index(),
        )
        self.evidence.runs.append(record)
        mark = self.settings.finder.mark()
        if self.watch is not None:
            self.watch.refresh()
            record.events_before = self.watch.events
            record.turn_ends_before = self.watch.turn_ends
        process = HarnessProcess(
            argv, self._env(key), self.changed, ready=self.settings.ready
        )
        try:
            process.start()
        except OSError as error:
            record.start_error = f"{argv[0]}: {error.strerror or error}"
            return record
        self.current = process
        self.say(f"{name}: started {' '.join(argv)} (pid {process.pid})")
        try:
            self._feed(process, record, turns, mark)
            process.close_stdin()
            # A harness stuck in a turn already had its timeout: it gets a
            # short grace to exit at end of input, not a second timeout.
            stuck = record.problem is not None and process.returncode is None
            limit = min(STUCK_GRACE, self.settings.timeout) if stuck else None
            exited = self._wait(
                lambda: process.returncode is not None, process, mark, limit
            )
            if not exited:
                record.killed_at_end = True
        finally:
            process.end()
            self.current = None
        if self.watch is not None:
            self.watch.refresh()
            record.turn_ends_after = self.watch.turn_ends
        record.exit_status = process.returncode
        record.output = process.output()
        return record

    def _feed(
        self,
        process: HarnessProcess,
        record: RunRecord,
        turns: tuple[str, ...],
        mark: Mark,
    ) -> None:
        for number, text in enumerate(turns, start=1):
            if self.settings.ready is not None:
                self._wait(_printed(process, number), process, mark)
            if process.returncode is not None:
                record.problem = (
                    f"the harness exited (status {process.returncode}) before"
                    f" turn {number} of {len(turns)} was fed"
                )
                return
            turn = TurnRecord(text=text, captures_before=self._captured(record))
            record.turns.append(turn)
            if not process.feed(text):
                record.problem = f"the harness closed its stdin before turn {number}"
                return
            self.say(f"{record.name}: turn {number}: {text}")

            def handled(n: int = number) -> bool:
                if self.settings.ready is not None:
                    # the harness says it is done: its prompt is back
                    done = process.ready_count > n
                else:
                    done = (
                        self.watch is not None
                        and self.watch.turn_ends - record.turn_ends_before >= n
                    )
                return done and self.fake.in_flight == 0 and process.unread_input() == 0

            done = self._wait(handled, process, mark)
            turn.captures_after = self._captured(record)
            if not done and handled():
                done = True  # it exited right after handling the turn
            turn.handled = done
            if not done:
                record.problem = self._why_not(process, number, len(turns))
                return

    def _why_not(self, process: HarnessProcess, number: int, total: int) -> str:
        where = f"turn {number} of {total}"
        if process.returncode is not None:
            return (
                f"the harness exited (status {process.returncode}) without"
                f" handling {where}"
            )
        unread = process.unread_input()
        if self.settings.ready is not None:
            state = f"it did not print {self.settings.ready!r} again"
        elif self.watch is None:
            state = f"no log appeared ({self.settings.finder.describe()})"
        else:
            state = "the log holds no turn/end for it"
        read = (
            "the harness never read its line" if unread else "the harness read its line"
        )
        return (
            f"{where} was not handled within {self.settings.timeout:g} s: {read},"
            f" {state}; {self.fake.in_flight} request(s) in flight"
        )

    def _mine(self, record: RunRecord) -> list[CapturedRequest]:
        """The requests this process sent: by its key, else by arrival."""
        if self.settings.api_key_env:
            return self.fake.captures({record.key_digest})
        runs = self.evidence.runs
        position = runs.index(record)
        end = runs[position + 1].first_request if position + 1 < len(runs) else None
        return [
            capture
            for capture in self.fake.provider.requests
            if capture.index >= record.first_request
            and (end is None or capture.index < end)
        ]

    def _captured(self, record: RunRecord) -> int:
        return len(self._mine(record))

    def _wait(
        self,
        condition: Callable[[], bool],
        process: HarnessProcess,
        mark: Mark,
        limit: float | None = None,
    ) -> bool:
        """Wait until `condition` holds (True), or the harness exits or time is up."""
        deadline = time.monotonic() + (
            self.settings.timeout if limit is None else limit
        )
        scanned = 0.0
        while True:
            self._look_for_log(mark)
            if condition():
                return True
            if process.returncode is not None:
                self._look_for_log(mark)
                return condition()
            now = time.monotonic()
            if now >= deadline:
                return False
            if now - scanned >= SCAN_EVERY:
                process.scan()
                scanned = now
            with self.changed:
                self.changed.wait(timeout=min(POLL, deadline - now))

    def _look_for_log(self, mark: Mark) -> None:
        if self.watch is None:
            changed = self.settings.finder.changed_since(mark)
            if not changed:
                return
            self.watch = LogWatch(changed[0])
            self.evidence.other_logs = changed[1:]
            self.say(f"log: {changed[0]}")
        self.watch.refresh()


def _printed(process: HarnessProcess, times: int) -> Callable[[], bool]:
    """The condition: the ready text appeared `times` times on stdout."""
    return lambda: process.ready_count >= times
