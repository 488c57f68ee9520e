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

Other driver styles (`reqfold.conformance.probe.styles`): one process per
turn (a turn is handled once its process exited 0 with nothing in
flight) and JSON lines (once an output line matches ``--turn-end``). A
process's first input can wait for a readiness signal (``--ready-when``);
a line the harness read and then ignored is reported as soon as it is
idle again (its readiness text printed again, or its processes used no
CPU for `IDLE` seconds, with no request sent), not after the timeout.

Every process runs in the probe's working folder (`workdir`), after the
configuration templates were written for it; the perturbations
(`perturb`) change the folder or the clock between processes.

Waiting is on a condition the fake, the output readers and the exit
waiter notify; the log file, which nothing notifies, is read again at
each wake-up or every `POLL` seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from reqfold.conformance.harness.log_file import read_log
from reqfold.conformance.probe.config_files import ConfigFiles, ConfigTemplate
from reqfold.conformance.probe.fake import ProbeFake
from reqfold.conformance.probe.harness import HarnessProcess
from reqfold.conformance.probe.logs import LogFinder, LogWatch, Mark
from reqfold.conformance.probe.perturb import (
    FOLLOW_UP,
    FOLLOW_UP_AGAIN,
    executable_of,
    faketime_library,
    is_go_program,
    is_static_elf,
    next_day_env,
)
from reqfold.conformance.probe.styles import LineMatch, Readiness, send_line
from reqfold.conformance.probe.turns import fill
from reqfold.conformance.probe.workdir import change_workspace
from reqfold.fakes import CapturedRequest

POLL = 0.05
"""The longest wait between two looks at the log file (seconds)."""
STUCK_GRACE = 2.0
"""How long a harness that did not finish a turn may take to exit once its
input is closed (seconds; at most --timeout)."""
SCAN_EVERY = 0.25
"""How often the harness's process tree is scanned while it runs (seconds)."""
IDLE = 2.0
"""How long a harness that read its line, sent nothing and has nothing in
flight may use no CPU before its line is reported dropped (seconds)."""
STDIN_BROKE_EXIT = 2.0
"""How long a harness whose stdin broke has to report its exit before the
probe says it closed its stdin (seconds; one that is exiting takes far less)."""


@dataclass(slots=True, kw_only=True)
class TurnRecord:
    """One fed turn: its text, and the session's captures before and after."""

    text: str
    captures_before: int
    captures_after: int = 0
    handled: bool = False
    kind: str = "turn"
    """``turn``, ``compact`` (the turn that forces a compaction),
    ``after-compact`` (the turn after it: an expected break) or
    ``follow-up`` (the next one: append-only again)."""


@dataclass(slots=True, kw_only=True)
class ProcessRecord:
    """One harness process of the probe (not `reqfold.conformance.run.record.
    RunRecord`, what the parts of a `reqfold run` produce)."""

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
    problem_says_exit: bool = False
    """Whether `problem` already says the harness exited, and with what status."""
    exit_status: int | None = None
    killed_at_end: bool = False
    turn_ends_before: int = 0
    turn_ends_after: int = 0
    """``turn/end`` events in the log before the process started and after
    it ended: the turns its log shows it handled."""
    output: str = ""
    phase: str = "first"
    """``first``, ``resumed`` or ``fresh`` (the fresh-session perturbation)."""
    clock_problem: str | None = None
    """Why the next-day clock did not reach this process, when it did not."""

    @property
    def handled(self) -> int:
        """How many fed turns were handled."""
        return sum(1 for turn in self.turns if turn.handled)


@dataclass(slots=True, kw_only=True)
class ProbeEvidence:
    """What a probe session left: runs, the log, the captures."""

    runs: list[ProcessRecord] = field(default_factory=list)
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
    fresh_runs: list[ProcessRecord] = field(default_factory=list)
    """The fresh session's processes (perturbation): judged apart."""
    fresh_captures: list[CapturedRequest] = field(default_factory=list)
    fresh_capture_runs: list[str] = field(default_factory=list)
    fresh_log_path: str | None = None
    """The fresh session's own log (perturbation), kept apart by ``--keep``."""
    unserved: list[CapturedRequest] = field(default_factory=list)
    """Requests to paths the fake does not serve: shown, never judged."""
    workspace_change: str = ""
    perturbations: tuple[str, ...] = ()

    @property
    def has_log(self) -> bool:
        """Whether a log was found, held in memory or left on disk."""
        return self.log_path is not None and (bool(self.log) or self.log_size > 0)

    def captures_by_arrival(self) -> list[tuple[CapturedRequest, str]]:
        """Both sessions' captures, each with the process that sent it, in the
        order the fake received them."""
        pairs = [
            *zip(self.captures, self.capture_runs, strict=True),
            *zip(self.fresh_captures, self.fresh_capture_runs, strict=True),
        ]
        return sorted(pairs, key=lambda pair: pair[0].index)

    def turn_requests(self) -> Iterator[tuple[TurnRecord, list[int]]]:
        """Each turn of the session's processes, with the indices of the
        requests it sent."""
        for record in self.runs:
            mine = [
                capture.index
                for capture, owner in zip(self.captures, self.capture_runs, strict=True)
                if owner == record.name
            ]
            for turn in record.turns:
                yield turn, mine[turn.captures_before : turn.captures_after]


def fresh_log_note(path: str) -> str:
    """The note naming the fresh session's log (``--perturb fresh-session``)."""
    return f"fresh session's log: {path}"


@dataclass(slots=True, kw_only=True)
class ProbeSettings:
    """What the command line asked for."""

    command: list[str]
    resume_command: list[str] | None
    first_turns: tuple[str, ...]
    resumed_turns: tuple[str, ...]
    base_url_env: str | None
    api_key_env: str | None
    base_url_suffix: str
    finder: LogFinder
    log_dir: str
    timeout: float
    ready: str | None = None
    style: str = "lines"
    next_command: list[str] | None = None
    """The next-turn command (``process`` style)."""
    send: str | None = None
    """The JSON line template of a turn (``jsonl`` style)."""
    turn_end: tuple[LineMatch, ...] = ()
    """Output lines that end a turn (``jsonl`` style)."""
    ready_when: Readiness | None = None
    workdir: str = ""
    templates: tuple[ConfigTemplate, ...] = ()
    model: str = "deepseek-chat"
    perturbations: tuple[str, ...] = ()
    compact: str | None = None
    keyed: bool = True
    """Whether each process gets its key where the harness reads it (env or
    template): then captures are attributed by key, else by arrival."""
    scratch: str = ""
    """A folder the probe owns for its own files ({prompt_file})."""
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
        self.evidence = ProbeEvidence(perturbations=settings.perturbations)
        self.watch: LogWatch | None = None
        self.current: HarnessProcess | None = None
        self.say = on_progress
        self._runs: list[ProcessRecord] = self.evidence.runs
        self._library = (
            faketime_library() if "next-day" in settings.perturbations else None
        )
        self.config_files = ConfigFiles(settings.templates)

    # ------------------------------------------------------------ the session

    def run(self) -> ProbeEvidence:
        """Run the first process(es), then the resumed one(s), then the
        perturbations' extra session; gather the evidence."""
        try:
            return self._session()
        finally:  # interrupted too: the user's files are put back
            self.evidence.notes.extend(self.config_files.restore())

    def _session(self) -> ProbeEvidence:
        settings = self.settings
        first, resumed = list(settings.first_turns), list(settings.resumed_turns)
        compaction = "compaction" in settings.perturbations and settings.compact
        if compaction:
            extra = [settings.compact or "", FOLLOW_UP, FOLLOW_UP_AGAIN]
            (resumed if resumed else first).extend(extra)
        first_record = self._phase("first", first, starts_session=True)
        if resumed and first_record is not None and first_record.start_error is None:
            self._resume(resumed)
        if "fresh-session" in settings.perturbations and not any(
            run.start_error for run in self._runs
        ):
            self._fresh_session(list(settings.first_turns[:1]))
        self._collect()
        return self.evidence

    def _resume(self, turns: list[str]) -> None:
        settings = self.settings
        if (
            settings.style != "process"
            and self.watch is None
            and settings.log_expected
            and self._needs_log()
        ):
            self.evidence.notes.append(
                "the resume command was not run: the first process wrote no log"
            )
            return
        if "workspace" in settings.perturbations:
            self.evidence.workspace_change = change_workspace(Path(settings.workdir))
            self.say(f"workspace changed: {self.evidence.workspace_change}")
        self._phase("resumed", turns, starts_session=False)

    def _needs_log(self) -> bool:
        """Whether the resume command takes the log's path or session id."""
        words = self.settings.resume_command or []
        return any("{log_path}" in w or "{session_id}" in w for w in words)

    def _fresh_session(self, turns: list[str]) -> None:
        """A second session in the same working folder, judged apart."""
        main_watch, self.watch = self.watch, None
        self._runs = self.evidence.fresh_runs
        try:
            self._phase("fresh", turns, starts_session=True)
        finally:
            fresh_watch, self.watch = self.watch, main_watch
            self._runs = self.evidence.runs
        if fresh_watch is not None:
            self.evidence.fresh_log_path = fresh_watch.path
            self.evidence.notes.append(fresh_log_note(fresh_watch.path))

    def _phase(
        self, phase: str, turns: list[str], *, starts_session: bool
    ) -> ProcessRecord | None:
        """Feed `turns` in the driver's style; returns the phase's first run."""
        settings = self.settings
        if not turns:
            return None
        if settings.style == "process":
            first: ProcessRecord | None = None
            for position, text in enumerate(turns):
                opening = starts_session and position == 0
                command = (
                    settings.command
                    if opening
                    else (settings.next_command or settings.command)
                )
                record = self._run(phase, command, [text])
                first = first or record
                if record.start_error is not None or record.handled < 1:
                    break
            return first
        if starts_session:
            command = settings.command
        else:
            assert settings.resume_command is not None
            command = settings.resume_command
        return self._run(phase, command, turns)

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
        # every one, with or without a key: the fake serves this probe alone
        evidence.unserved = [c for c in self.fake.provider.requests if c.unserved]
        for records, captures, owners in (
            (evidence.runs, evidence.captures, evidence.capture_runs),
            (evidence.fresh_runs, evidence.fresh_captures, evidence.fresh_capture_runs),
        ):
            for record in records:
                mine = self._mine(record)
                mine = [capture for capture in mine if not capture.unserved]
                captures.extend(mine)
                owners.extend(record.name for _ in mine)

    # ------------------------------------------------------------ one process

    def _values(self, key: str) -> dict[str, str]:
        """The placeholders of a command and of the configuration templates."""
        settings = self.settings
        values = {
            "log_dir": settings.log_dir,
            "workdir": settings.workdir,
            "base_url": self.fake.url + settings.base_url_suffix,
            "api_key": key,
            "model": settings.model,
        }
        if self.watch is not None:
            values["log_path"] = self.watch.path
            values["session_id"] = self.watch.session_id or ""
        return values

    def _env(self, key: str, phase: str) -> dict[str, str]:
        settings = self.settings
        env = dict(os.environ)
        if settings.workdir:
            # as a shell would: some runtimes take the project folder from PWD
            env["PWD"] = settings.workdir
        if settings.base_url_env:
            env[settings.base_url_env] = self.fake.url + settings.base_url_suffix
        if settings.api_key_env:
            env[settings.api_key_env] = key
        if phase in ("resumed", "fresh") and self._library is not None:
            # the fresh session runs on the resumed process's day, so only
            # what differs per session tells it from the first
            env = next_day_env(self._library, env)
        return env

    def _clock_problem(self, argv: list[str]) -> str | None:
        """Why the next-day clock cannot reach this command, known up front."""
        if self._library is None:
            return "libfaketime is not installed (Debian package faketime)"
        program = executable_of(argv[0])
        if program is not None and is_static_elf(program):
            return f"{program} is statically linked: a preloaded clock never loads"
        if program is not None and is_go_program(program):
            return f"{program} is a Go program: it reads the clock past libfaketime"
        return None

    def _run(self, phase: str, template: list[str], turns: list[str]) -> ProcessRecord:
        settings = self.settings
        key, digest = self.fake.new_key()
        values = self._values(key)
        number = len(self.evidence.runs) + len(self.evidence.fresh_runs) + 1
        name = f"run {number}"
        if settings.style == "process":
            prompt_file = os.path.join(settings.scratch, f"prompt-{number}.txt")
            Path(prompt_file).write_text(turns[0], encoding="utf-8")
            values = {**values, "prompt": turns[0], "prompt_file": prompt_file}
        argv = _from_here(fill(template, values))
        record = ProcessRecord(
            name=name,
            argv=argv,
            key_digest=digest,
            planned=len(turns),
            first_request=self.fake.next_index(),
            phase=phase,
        )
        self._runs.append(record)
        kinds = self._kinds(turns)
        mark = settings.finder.mark()
        if self.watch is not None:
            self.watch.refresh()
            record.events_before = self.watch.events
            record.turn_ends_before = self.watch.turn_ends
        next_day = phase == "resumed" and "next-day" in settings.perturbations
        if next_day:
            record.clock_problem = self._clock_problem(argv)
        try:
            self.config_files.write(values)
        except OSError as error:
            record.start_error = (
                f"the configuration file {error.filename or '?'} cannot be"
                f" written: {error.strerror or error}"
            )
            return record
        readiness = settings.ready_when
        process = HarnessProcess(
            argv,
            self._env(key, phase),
            self.changed,
            ready=settings.ready or _text_of(readiness, "stdout"),
            ready_stderr=_text_of(readiness, "stderr"),
            turn_end=self._turn_end_matcher(),
            cwd=settings.workdir or None,
        )
        try:
            process.start()
        except OSError as error:
            record.start_error = f"{argv[0]}: {error.strerror or error}"
            return record
        self.current = process
        self.say(f"{name}: started {' '.join(argv)} (pid {process.pid})")
        try:
            if settings.style == "process":
                process.close_stdin()
                self._one_turn(process, record, turns[0], mark)
            else:
                self._feed(process, record, turns, kinds, mark)
            process.close_stdin()
            # A harness stuck in a turn already had its timeout: it gets a
            # short grace to exit at end of input, not a second timeout.
            stuck = record.problem is not None and process.returncode is None
            limit = min(STUCK_GRACE, settings.timeout) if stuck else None
            exited = self._wait(
                lambda: process.returncode is not None, process, mark, limit
            )
            if not exited:
                record.killed_at_end = True
            unseen = process.clock_seen is False
            if next_day and record.clock_problem is None and process.clock_missed:
                record.clock_problem = (
                    f"{process.clock_missed}: a preloaded clock never reaches it"
                )
            if next_day and record.clock_problem is None and unseen:
                record.clock_problem = (
                    "no process of the harness mapped libfaketime (a static or"
                    " Go program, or one that clears LD_PRELOAD)"
                )
        finally:
            process.end()
            self.current = None
        if self.watch is not None:
            self.watch.refresh()
            record.turn_ends_after = self.watch.turn_ends
        record.exit_status = process.returncode
        record.output = process.output()
        for turn, kind in zip(record.turns, kinds, strict=False):
            turn.kind = kind
        return record

    def _kinds(self, turns: list[str]) -> list[str]:
        """Which of these turns force a compaction and which follow it."""
        kinds = ["turn"] * len(turns)
        if "compaction" not in self.settings.perturbations:
            return kinds
        for position, text in enumerate(turns):
            if text == self.settings.compact:
                kinds[position] = "compact"
            elif text == FOLLOW_UP:
                kinds[position] = "after-compact"
            elif text == FOLLOW_UP_AGAIN:
                kinds[position] = "follow-up"
        return kinds

    def _turn_end_matcher(self) -> Callable[[bytes], bool] | None:
        ends = self.settings.turn_end
        if self.settings.style != "jsonl" or not ends:
            return None
        return lambda line: any(end.matches(line) for end in ends)

    def _ready_first(
        self, process: HarnessProcess, record: ProcessRecord, mark: Mark
    ) -> bool:
        """Wait for the readiness signal before the first input; False (with
        the problem recorded) when it never came."""
        settings = self.settings
        readiness = settings.ready_when
        if settings.ready is not None:
            ok = self._wait(_printed(process, 1), process, mark)
        elif readiness is None:
            return True
        else:
            ok = self._wait(self._ready_condition(process, readiness), process, mark)
        if not ok and process.returncode is None:
            what = (
                readiness.describe() if readiness else f"{settings.ready!r} on stdout"
            )
            record.problem = (
                f"the harness was not ready within {settings.timeout:g} s (waited"
                f" for {what})"
            )
            return False
        return True

    def _ready_condition(
        self, process: HarnessProcess, readiness: Readiness
    ) -> Callable[[], bool]:
        kind = readiness.kind
        if kind == "stdout":
            return _printed(process, 1)
        if kind == "stderr":
            return lambda: process.stderr_count >= 1
        if kind == "file":
            path = fill([readiness.value], self._values(""))[0]
            if not os.path.isabs(path) and self.settings.workdir:
                path = os.path.join(self.settings.workdir, path)
            return lambda: os.path.exists(path)
        if kind == "log":
            events = self.watch.events if self.watch is not None else -1

            def log_changed() -> bool:
                return self.watch is not None and self.watch.events > events

            return log_changed
        started = time.monotonic()

        def settled() -> bool:
            now = time.monotonic()
            quiet_since = max(process.last_output, started)
            return now - quiet_since >= readiness.seconds

        return settled

    def _one_turn(
        self, process: HarnessProcess, record: ProcessRecord, text: str, mark: Mark
    ) -> None:
        """One process per turn: handled once it exited 0, nothing in flight."""
        turn = TurnRecord(text=text, captures_before=self._captured(record))
        record.turns.append(turn)
        self.say(f"{record.name}: turn: {text}")

        def exited() -> bool:
            return process.returncode is not None and self.fake.in_flight == 0

        done = self._wait(exited, process, mark)
        turn.captures_after = self._captured(record)
        status = process.returncode
        turn.handled = done and status == 0
        if not done:
            record.problem = (
                f"its turn was not handled within {self.settings.timeout:g} s: the"
                f" process did not exit; {self.fake.in_flight} request(s) in flight"
            )
        elif status != 0:
            record.problem = f"the process exited with status {status}"

    def _feed(
        self,
        process: HarnessProcess,
        record: ProcessRecord,
        turns: list[str],
        kinds: list[str],
        mark: Mark,
    ) -> None:
        settings = self.settings
        if not self._ready_first(process, record, mark):
            return
        for number, text in enumerate(turns, start=1):
            if settings.ready is not None and number > 1:
                self._wait(_printed(process, number), process, mark)
            if process.returncode is not None:
                _exited_before(record, process.returncode, number, len(turns))
                return
            turn = TurnRecord(text=text, captures_before=self._captured(record))
            record.turns.append(turn)
            line = send_line(settings.send or "", text) if settings.send else text
            seen_before = self._signals(process)
            requests_before = self.fake.started
            if not process.feed(line):
                record.turns.pop()  # it never reached the harness
                status = process.exit_status_within(STDIN_BROKE_EXIT)
                if status is not None:
                    _exited_before(record, status, number, len(turns))
                else:
                    record.problem = (
                        f"the harness closed its stdin before turn {number}"
                        f" of {len(turns)} was fed"
                    )
                return
            self.say(f"{record.name}: turn {number}: {text}")

            def handled(n: int = number) -> bool:
                if settings.style == "jsonl":
                    done = process.turn_ends >= n
                elif settings.ready is not None:
                    # the harness says it is done: its prompt is back
                    done = process.ready_count > n
                else:
                    done = (
                        self.watch is not None
                        and self.watch.turn_ends - record.turn_ends_before >= n
                    )
                return done and self.fake.in_flight == 0 and process.unread_input() == 0

            idle = _IdleWatch(
                process,
                self.fake,
                requests_before,
                seen_before,
                by_cpu=settings.timeout >= IDLE * 2,
            )
            dropped = [False]

            def handled_or_dropped(
                idle: _IdleWatch = idle, dropped: list[bool] = dropped
            ) -> bool:
                if handled():
                    return True
                if settings.ready is None and idle.dropped(self._signals(process)):
                    dropped[0] = True
                    return True
                return False

            done = self._wait(handled_or_dropped, process, mark)
            turn.captures_after = self._captured(record)
            if dropped[0] and not handled():
                record.problem = (
                    f"turn {number} of {len(turns)} was dropped: the harness read its"
                    f" line and went idle again ({idle.why}) without a request or"
                    " a turn end"
                )
                return
            if not done and handled():
                done = True  # it exited right after handling the turn
            turn.handled = done
            if not done:
                status = process.returncode
                if status is not None and process.unread_input() > 0:
                    # it exited without reading its line: never fed, as when
                    # its exit came before the line was written
                    record.turns.pop()
                    _exited_before(record, status, number, len(turns))
                    return
                record.problem = self._why_not(process, status, number, len(turns))
                record.problem_says_exit = status is not None
                return

    def _signals(self, process: HarnessProcess) -> int:
        """How many readiness texts (stdout and stderr) it printed so far."""
        readiness = self.settings.ready_when
        if readiness is None:
            return -1
        if readiness.kind == "stdout":
            return process.ready_count
        if readiness.kind == "stderr":
            return process.stderr_count
        return -1

    def _why_not(
        self, process: HarnessProcess, status: int | None, number: int, total: int
    ) -> str:
        """Why turn `number` was not handled; `status`: its exit status, if
        it had exited when the caller looked."""
        where = f"turn {number} of {total}"
        if status is not None:
            return f"the harness exited (status {status}) without handling {where}"
        unread = process.unread_input()
        if self.settings.style == "jsonl":
            ends = " or ".join(end.describe() for end in self.settings.turn_end)
            state = f"no output line matched {ends}"
        elif self.settings.ready is not None:
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

    def _mine(self, record: ProcessRecord) -> list[CapturedRequest]:
        """The requests this process sent: by its key, else by arrival."""
        if self.settings.keyed:
            return self.fake.captures({record.key_digest})
        runs = sorted(
            [*self.evidence.runs, *self.evidence.fresh_runs],
            key=lambda run: run.first_request,
        )
        position = runs.index(record)
        end = runs[position + 1].first_request if position + 1 < len(runs) else None
        return [
            capture
            for capture in self.fake.provider.requests
            if capture.index >= record.first_request
            and (end is None or capture.index < end)
        ]

    def _captured(self, record: ProcessRecord) -> int:
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
                process.scan(self._library)
                scanned = now
            with self.changed:
                self.changed.wait(timeout=min(POLL, deadline - now))

    def _look_for_log(self, mark: Mark) -> None:
        if self.watch is None:
            changed = self.settings.finder.changed_since(mark)
            if not changed:
                return
            self.watch = LogWatch(changed[0])
            if self._runs is self.evidence.runs:
                self.evidence.other_logs = changed[1:]
            self.say(f"log: {changed[0]}")
        self.watch.refresh()


class _IdleWatch:
    """Tells a line the harness read and then ignored: it went idle again
    (printed its readiness text once more, or used no CPU for `IDLE`
    seconds) with no request sent since the line and none in flight."""

    def __init__(
        self,
        process: HarnessProcess,
        fake: ProbeFake,
        requests: int,
        signals: int,
        *,
        by_cpu: bool,
    ) -> None:
        self.process = process
        self.by_cpu = by_cpu
        """Whether idle CPU counts: only with a timeout of twice `IDLE` or
        more, so the two never race to name one hang."""
        self.fake = fake
        self.requests = requests
        self.signals = signals
        self.ticks = -1
        self.since = time.monotonic()
        self.why = ""

    def dropped(self, signals: int) -> bool:
        process, fake = self.process, self.fake
        if fake.started != self.requests or fake.in_flight or process.unread_input():
            self.ticks = -1
            return False
        if self.signals >= 0 and signals > self.signals:
            self.why = "it printed its readiness text again"
            return True
        if process.tree is None or not self.by_cpu:
            return False
        ticks = process.tree.cpu_ticks()
        now = time.monotonic()
        if ticks != self.ticks:
            self.ticks, self.since = ticks, now
            return False
        if now - self.since >= IDLE:
            self.why = f"its processes used no CPU for {IDLE:g} s"
            return True
        return False


def _from_here(argv: list[str]) -> list[str]:
    """A program named by a relative path is found from where the probe runs,
    not from the working folder the harness runs in."""
    program = argv[0]
    if os.sep in program and not os.path.isabs(program) and os.path.exists(program):
        return [os.path.abspath(program), *argv[1:]]
    return argv


def _text_of(readiness: Readiness | None, kind: str) -> str | None:
    return readiness.value if readiness is not None and readiness.kind == kind else None


def _exited_before(record: ProcessRecord, status: int, number: int, total: int) -> None:
    """The run stopped because the harness exited before turn `number` was fed."""
    record.problem = (
        f"the harness exited (status {status}) before turn {number} of {total} was fed"
    )
    record.problem_says_exit = True


def _printed(process: HarnessProcess, times: int) -> Callable[[], bool]:
    """The condition: the ready text appeared `times` times on stdout."""
    return lambda: process.ready_count >= times
