"""Driving one scenario through a harness adapter and collecting the evidence.

The driver is the suite's side of the harness protocol
(docs/adapter-protocol.md, part 2): it opens a session with an API key of
its own, starts instances with the scenario's set-up, sends prompts and
waits for ``turn/ended``, and reacts to ``contributor/started`` with the
scenario's actions (a cancel *inside* a composition, a release, ...).
Nothing here sleeps: every wait is for a message, bounded by the
connection's timeout, and a turn as a whole must end within
`TURN_TIMEOUTS` of them, however many notifications come meanwhile (an
adapter that keeps talking but never ends the turn cannot hold the run).

When the adapter breaks or refuses a step, the exception carries a note
(`BaseException.add_note`) saying at which step of the scenario it
happened, for the report.

What it returns is `Evidence`: the log the harness wrote, the requests the
fake captured for this session (picked out by the session's API key), what
each send did, and how often each contributor was called per instance.
`reqfold.conformance.harness.checks` judges it.
"""

from __future__ import annotations

import contextlib
import copy
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from reqfold.conformance.adapters.messages import check_notification, check_result
from reqfold.conformance.errors import AdapterProtocolError, AdapterTimeout
from reqfold.conformance.harness.evidence import Evidence, SendRecord
from reqfold.conformance.harness.features import NOT_SUPPORTED, feature_of_request
from reqfold.conformance.harness.log_file import count_lines, read_log
from reqfold.conformance.harness.scenarios import Scenario, Step
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

if TYPE_CHECKING:
    from reqfold.fakes import CapturedRequest, FakeProvider

# `fakes` is imported where a scenario is played, not here: `reqfold run`
# imports this module (the harness protocol) for every run, and a run that
# plays no scenario starts without the fake (reqfold.conformance.harness.runner).

TURN_TIMEOUTS = 3
"""A turn must end within this many connection timeouts in all."""


class HarnessConnection(Protocol):
    """An adapter that serves the harness methods (stdio or in process)."""

    timeout: float
    """Seconds one answer or notification may take."""

    def request(self, method: str, params: JsonObject) -> JsonObject:
        """Send one request; returns the whole response (``result`` or ``error``)."""
        ...

    def receive_notification(self, timeout: float | None = None) -> JsonObject:
        """The next notification, in order; raises `AdapterError` on a timeout."""
        ...

    def drain_notifications(self) -> list[JsonObject]:
        """The notifications that already arrived, without waiting for more."""
        ...


class ScenarioBroken(Exception):
    """The adapter refused a step the scenario needs: no verdict on the scenario."""


class FeatureNotSupported(ScenarioBroken):
    """The adapter refused an optional feature it did not declare as not
    supported (`NOT_SUPPORTED`): the scenario is not covered, which is
    neither a pass nor an error. A declared feature refused so is a plain
    `ScenarioBroken`: an adapter must not dodge a scenario part way."""


class ScenarioDriver:
    """Runs scenarios against one adapter connection and one fake provider."""

    def __init__(
        self,
        connection: HarnessConnection,
        fake: FakeProvider,
        base_url: str,
        workdir: Path,
        declared: frozenset[str] | None = None,
    ) -> None:
        self.connection = connection
        self.fake = fake
        self.declared = declared
        """The features the adapter declared in ``initialize``; None: unknown,
        so a feature refused as not supported is taken as not declared."""
        self.base_url = base_url
        self.workdir = workdir
        self.timeout = float(connection.timeout)
        """How long one notification may take (the connection's timeout)."""
        self.turn_limit = TURN_TIMEOUTS * self.timeout
        """How long a whole turn may take, from its send to its end."""
        self.evidence: Evidence | None = None
        """The evidence of the last run, also when it broke part way."""
        self.failed_step: int | None = None
        """The index of the step the last run broke at (None: it did not
        break, or broke outside a step)."""

    def run(self, scenario: Scenario, revision: Revision) -> Evidence:
        """Play `scenario` under `revision`; return its evidence.

        Raises `ScenarioBroken` when the adapter refuses a step, and lets
        `reqfold.conformance.errors.AdapterError` through when the adapter breaks;
        either carries a note naming the step it happened at.
        """
        run = _Run(self, scenario, revision)
        self.evidence = run.evidence
        self.failed_step = None
        total = len(scenario.steps)
        at: int | None = None
        try:
            run.open()
            for position, step in enumerate(scenario.steps):
                at = position
                run.where = f"step {position + 1} of {total}: {_describe_step(step)}"
                run.step(position, step)
            at = None
            run.where = "disposing the instance after the last step"
            run.finish()
        except Exception as error:
            self.failed_step = at
            if run.where:
                error.add_note(f"while {run.where}")
            raise
        finally:
            run.collect()
        return run.evidence


def _describe_step(step: Step) -> str:
    """A step in a few words, for error reports."""
    argument = step.argument
    if step.action == "start":
        name = argument if isinstance(argument, str) else argument.get("instance")
        return f"start {name}"
    if step.action == "send" or (step.action == "inject" and isinstance(argument, str)):
        text = argument if len(argument) <= 40 else argument[:37] + "..."
        return f"{step.action} {text!r}"
    return step.action


class _Run:
    """The state of one scenario run."""

    def __init__(
        self, driver: ScenarioDriver, scenario: Scenario, revision: Revision
    ) -> None:
        from reqfold.fakes import key_digest, parse_script_item

        self.driver = driver
        self.scenario = scenario
        self.revision = revision
        name = f"{scenario.id}.{revision.value}"
        self.session = name
        self.api_key = f"reqfold-{name}"
        self.digest = key_digest(self.api_key)
        self.instance: str | None = None
        """The scenario's name of the running instance (``i1``)."""
        self.alive = False
        self.capture_instances: list[str] = []
        driver.fake.reset(cache=True, capture=True, script=True)
        driver.fake.push(*(parse_script_item(item) for item in scenario.replies))
        self.evidence = Evidence(
            scenario=scenario,
            revision=revision,
            log_path=driver.workdir / f"{name}.jsonl",
        )
        self.where = ""
        """What the run is doing, for error reports."""

    def open(self) -> None:
        """Open the scenario's session, at a path where no file is (the protocol)."""
        self.where = "opening the session"
        stale = self.evidence.log_path
        if stale.is_file():  # kept from an earlier run in the same --keep folder
            stale.unlink()
        params: JsonObject = {
            "session": self.session,
            "log": str(self.evidence.log_path),
            "revision": self.revision.value,
        }
        if self.scenario.seed is not None:
            params["seed"] = str(self.scenario.seed)
        opened = self.call("session/open", params)
        log = Path(opened["log"])
        try:
            usable = log.is_file() or not log.exists()
        except (OSError, ValueError):  # a NUL in the path, say
            usable = False
        if not usable:
            raise AdapterProtocolError(
                f"session/open answered a log that is not a regular file:"
                f" {str(log)[:200]!r}"
            )
        self.evidence.log_path = log

    # ------------------------------------------------------------ requests

    def call(self, method: str, params: JsonObject) -> Any:
        """Send a request; the result, validated, or `ScenarioBroken`."""
        response = self.driver.connection.request(method, params)
        if "error" in response:
            error = response["error"]
            if error.get("code") == NOT_SUPPORTED:
                feature = feature_of_request(method, params)
                declared = self.driver.declared
                if feature is not None and declared is not None and feature in declared:
                    raise ScenarioBroken(
                        f"{method} was refused as not supported, but the adapter"
                        f" declared feature {feature!r} in initialize, so the"
                        " scenario is played, not excused"
                        ' (docs/adapter-protocol.md, "Optional features"):'
                        f" {str(error.get('message', ''))[:200]}"
                    )
                if feature is not None:
                    raise FeatureNotSupported(
                        f"the adapter answered {method} as not supported:"
                        f" {str(error.get('message', ''))[:200]}"
                    )
                raise ScenarioBroken(
                    f"{method} was refused as not supported, but every harness"
                    ' must support it (docs/adapter-protocol.md, "Optional'
                    f' features"): {error.get("message", "")}'
                )
            raise ScenarioBroken(
                f"{method} was refused: {error.get('message', '')}"
                f" (code {error.get('code')})"
            )
        problem = check_result(method, response["result"])
        if problem is not None:
            raise AdapterProtocolError(f"the result of {method} {problem}")
        return response["result"]

    def notification(self, deadline: float, seen: int) -> JsonObject:
        """The next notification, validated against its schema.

        Raises `AdapterTimeout` once `deadline` (the turn's) has passed;
        `seen` notifications came since the turn began.
        """
        remaining = deadline - time.monotonic()
        over = (
            f"the turn did not end within {self.driver.turn_limit:g}s"
            f" ({TURN_TIMEOUTS} times the timeout, the most a turn may take),"
            f" though {seen} notification(s) came meanwhile"
        )
        if remaining <= 0:
            raise AdapterTimeout(over)
        wait = min(self.driver.timeout, remaining)
        try:
            message = self.driver.connection.receive_notification(wait)
        except AdapterTimeout as error:
            if wait >= self.driver.timeout:
                raise
            raise AdapterTimeout(
                f"{over}; the adapter was killed", stderr_tail=error.stderr_tail
            ) from None
        problem = check_notification(message)
        if problem is not None:
            raise AdapterProtocolError(problem)
        params: JsonObject = message["params"]
        params["method"] = message["method"]
        return params

    # ------------------------------------------------------------ steps

    def step(self, position: int, step: Step) -> None:
        if step.action == "start":
            self.start(step.argument)
        elif step.action == "send":
            self.send(position, step)
        else:
            self.act(step.action, step.argument)

    def start(self, argument: Any) -> None:
        if self.alive:
            self.act("dispose", True)
        spec = {"instance": argument} if isinstance(argument, str) else argument
        params = copy.deepcopy(self.scenario.setup)
        params.update(copy.deepcopy({k: v for k, v in spec.items() if k != "instance"}))
        params.update(
            session=self.session,
            instance=self.wire(spec["instance"]),
            revision=self.revision.value,
            provider={
                "baseUrl": self.driver.base_url,
                "apiKey": self.api_key,
                "auxApiKey": f"{self.api_key}-aux",
                "dialect": self.driver.fake.profile.dialect,
            },
        )
        params.setdefault("system", "")
        params.setdefault("tools", [])
        params.setdefault("contributors", [])
        logged = _count_events(self.evidence.log_path)
        self.call("instance/start", params)
        self.instance = spec["instance"]
        self.alive = True
        self.evidence.instance_starts.append((self.instance, logged))

    def wire(self, instance: str) -> str:
        """The instance's name on the wire: unique within the adapter process."""
        return f"{self.session}:{instance}"

    def act(self, action: str, argument: Any) -> None:
        """One action on the current instance (also a reaction inside a send)."""
        assert self.instance is not None  # the first step starts one
        instance = self.wire(self.instance)
        if action == "cancel":
            params: JsonObject = {"instance": instance}
            if isinstance(argument, str):
                params["reason"] = argument
            self.call("instance/cancel", params)
        elif action == "dispose":
            self.call("instance/dispose", {"instance": instance})
            self.alive = False
        elif action == "inject":
            self.call("instance/inject", {"instance": instance, "text": argument})
            self.sync_captures()
        elif action == "update":
            self.call("instance/update", {"instance": instance, **argument})
        elif action == "compact":
            self.call("instance/compact", {"instance": instance})
        elif action == "release":
            self.call(
                "contributor/release", {"instance": instance, "contributor": argument}
            )
        elif action == "open":  # the fake's, not the adapter's
            self.driver.fake.gate(argument).open()
        else:  # pragma: no cover - the loader refuses other actions
            raise ValueError(f"unknown action {action!r}")

    def send(self, position: int, step: Step) -> None:
        assert self.instance is not None
        name, instance = self.instance, self.wire(self.instance)
        before = self.sync_captures()
        logged = _count_events(self.evidence.log_path)
        self.call("instance/send", {"instance": instance, "prompt": step.argument})
        deadline = time.monotonic() + self.driver.turn_limit
        self.where += f", waiting for the turn/ended of {name}"
        unfired = self.react_when_held(step, deadline)
        reactions = {
            (r.contributor or f"tool {r.tool}", r.call): r
            for r in step.during
            if not r.held
        }
        seen = 0
        while True:
            note = self.notification(deadline, seen)
            seen += 1
            if note["method"] in ("contributor/started", "tool/started"):
                if note["method"] == "contributor/started":
                    self.count_call(note)
                    key = (note["contributor"], note["call"])
                else:
                    key = (f"tool {note['tool']}", note["call"])
                reaction = None
                if note["instance"] == instance:
                    reaction = reactions.pop(key, None)
                for item in reaction.then if reaction is not None else ():
                    ((action, argument),) = item.items()
                    self.act(action, argument)
            elif note["method"] == "turn/ended" and note["instance"] == instance:
                break
        self.evidence.unfired.extend(
            f"send {len(self.evidence.sends) + 1}: {what}" for what in unfired
        )
        self.evidence.unfired.extend(
            f"send {len(self.evidence.sends) + 1}: call {call} of {contributor!r}"
            " never started, so its reaction never ran"
            for contributor, call in reactions
        )
        after = self.sync_captures()
        self.evidence.sends.append(
            SendRecord(
                instance=name,
                prompt=step.argument,
                turn=note["turn"],
                reason=note["reason"],
                captures_before=before,
                captures_after=after,
                expect=step.expect,
                logged_before=logged,
            )
        )

    def react_when_held(self, step: Step, deadline: float) -> list[str]:
        """Run the send's ``held`` reactions, in order, each once a request is
        held at its gate (a reply scripted with ``hold``): what lands then
        lands mid-request. The notifications meanwhile wait in the
        connection's queue. Returns the reactions whose request never came.
        """
        missed = []
        for reaction in step.during:
            if not reaction.held:
                continue
            gate = self.driver.fake.gate(reaction.held)
            if not gate.wait_until_held(max(deadline - time.monotonic(), 0.0)):
                missed.append(
                    f"no request was held at gate {reaction.held!r} within the"
                    " turn's time, so its reaction never ran"
                )
                continue
            for item in reaction.then:
                ((action, argument),) = item.items()
                self.act(action, argument)
        return missed

    def count_call(self, note: JsonObject) -> None:
        """Count a ``contributor/started`` of any instance of this session."""
        owner, _, name = str(note["instance"]).partition(":")
        if owner == self.session and name:
            self.evidence.calls[(name, note["contributor"])] += 1

    def sync_captures(self) -> int:
        """Attribute new captures to the running instance; return the count."""
        mine = self.captures()
        while len(self.capture_instances) < len(mine):
            self.capture_instances.append(self.instance or "")
        return len(mine)

    def captures(self) -> list[CapturedRequest]:
        return [c for c in self.driver.fake.requests if c.key == self.digest]

    def finish(self) -> None:
        """Dispose of the last instance; count calls it reported meanwhile."""
        if self.alive:
            self.act("dispose", True)
        for message in self.driver.connection.drain_notifications():
            problem = check_notification(message)
            if problem is not None:
                raise AdapterProtocolError(problem)
            if message["method"] == "contributor/started":
                self.count_call(message["params"])

    def collect(self) -> None:
        """Read the log and the session's captures into the evidence.

        The captures are also written beside the log (``<session>.requests.jsonl``),
        so a kept run can be checked again with ``reqfold check --requests``.
        """
        from reqfold.fakes import dump_capture_jsonl

        self.sync_captures()
        self.evidence.captures = self.captures()
        self.evidence.capture_instances = list(self.capture_instances)
        read = read_log(self.evidence.log_path)
        self.evidence.log = read.data
        self.evidence.log_size = read.size if read.left_on_disk else -1
        chosen = self.driver.workdir / f"{self.session}.jsonl"
        if self.evidence.log_path != chosen and (read.data or read.left_on_disk):
            # the harness chose another place: a copy where the suite asked,
            # so a kept folder (--keep) holds every log beside its requests
            with contextlib.suppress(OSError):
                shutil.copyfile(self.evidence.log_path, chosen)
        requests = self.driver.workdir / f"{self.session}.requests.jsonl"
        with contextlib.suppress(OSError):
            requests.write_text(
                dump_capture_jsonl(self.evidence.captures), encoding="utf-8"
            )


def _count_events(path: Path) -> int:
    """Events in the session file so far: complete lines after the storage
    line (counted a chunk at a time: the log may be of any size)."""
    return max(0, count_lines(path) - 1)
