"""``reqfold probe``: check an unmodified harness as a black box (the shell).

Parses the options, serves the fake, drives the harness (`driver`), judges
(`judge`) and prints like ``reqfold run``: a per-turn cache timeline, the
rules with a problem, the problems and one verdict, last. Exit status: 0 conformant
(SHOULD warnings allowed unless ``--strict``), 1 a MUST rule is broken
(also: no log, no request, fewer turns handled than fed), 2 bad arguments,
3 no verdict (the harness could not be started, or a check errored), 130
or 143 when interrupted (the harness and all it started are killed first).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from reqfold.conformance.adapters.lifecycle import timeout_problem
from reqfold.conformance.cache import render_text
from reqfold.conformance.cache.model import GATE
from reqfold.conformance.cache.options import add_gate_arguments
from reqfold.conformance.interrupts import commit_verdict, run_guarded
from reqfold.conformance.options import add_show_argument
from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.probe.cache import (
    cache_alone,
    cache_checks,
    judge_probe_cache,
    kept_capture_lines,
)
from reqfold.conformance.probe.config_files import (
    check_destinations,
    parse_config_template,
    unknown_placeholders,
)
from reqfold.conformance.probe.driver import (
    ProbeDriver,
    ProbeEvidence,
    ProbeSettings,
    ProcessRecord,
)
from reqfold.conformance.probe.fake import ProbeFake
from reqfold.conformance.probe.judge import (
    TimelineRow,
    choose_revision,
    count_checks,
    log_checks,
    perturbation_checks,
    timeline,
    turn_checks,
)
from reqfold.conformance.probe.logs import LogFinder
from reqfold.conformance.probe.perturb import (
    AT_RESUME,
    PERTURBATION,
    parse_perturbations,
)
from reqfold.conformance.probe.reports import write_probe_reports
from reqfold.conformance.probe.styles import (
    STYLES,
    check_send_template,
    parse_line_match,
    parse_readiness,
)
from reqfold.conformance.probe.turns import RESUME_MARK, plan_turns, split_command
from reqfold.conformance.probe.workdir import create_workdir
from reqfold.conformance.report.writing import (
    REPORTS_TITLE,
    add_report_file_arguments,
    report_problem,
)
from reqfold.conformance.summary import (
    check_lines,
    colour_wanted,
    count_text,
    problem_lines,
    rule_lines,
    verdict_line,
)
from reqfold.conformance.terminal_text import printable
from reqfold.conformance.verdict import (
    NO_VERDICT,
    Check,
    exit_status,
    rule_table,
    verdict_text,
)
from reqfold.conformance.written_files import fresh_folder
from reqfold.fakes import PROFILES
from reqfold.fakes.dialects.openai_chat import WIRE as CHAT_COMPLETIONS
from reqfold.fakes.dialects.registry import DEFAULT_DIALECT, dialect_named
from reqfold.reference.json_values import JsonObject
from reqfold.reference.revisions import Revision

DIALECTS = tuple(PROFILES)
"""Every dialect the fake serves (`reqfold.fakes.dialects.registry`)."""

NO_VERDICT_REASONS: Final[Mapping[int, str]] = {
    NO_VERDICT: "the harness could not be run or a check errored",
    2: "the evidence --keep asked for could not be kept",
}
"""Why a probe gives no verdict, by exit status (`verdict_text`)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``reqfold probe``."""
    parser.add_argument(
        "--cmd",
        required=True,
        metavar="COMMAND",
        help="the harness command (split like a shell would; {log_dir} is filled"
        " in): reads one user turn per line on stdin",
    )
    parser.add_argument(
        "--base-url-env",
        metavar="NAME",
        help="the environment variable the harness reads its provider's base URL"
        " from (it gets the fake's, http://127.0.0.1:PORT); this or"
        " --config-template is required",
    )
    parser.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the environment variable it reads its API key from (it gets a fresh"
        " key per process)",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--log-dir",
        metavar="DIR",
        help="where the harness writes its session logs (*.jsonl, searched"
        " recursively); default: a fresh folder, given as {log_dir}",
    )
    where.add_argument(
        "--log-glob",
        metavar="PATTERN",
        help="a glob pattern matching the harness's session logs (** recurses)",
    )
    parser.add_argument(
        "--turns",
        metavar="FILE",
        help="the user turns, one per line ('---' splits off those of the resumed"
        " process); default: three short questions",
    )
    parser.add_argument(
        "--resume-cmd",
        metavar="COMMAND",
        help="restart the harness over the same log with this command ({log_path}"
        " and {session_id} are filled in from the log found, {log_dir} as in"
        " --cmd)",
    )
    parser.add_argument(
        "--revision",
        choices=[r.value for r in Revision],
        help="judge the log under this revision (default: the storage line's,"
        " else the one its header events fit)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="how long one turn (and the exit at end of input) may take before"
        " the harness is killed (default 60)",
    )
    parser.add_argument(
        "--ready",
        metavar="TEXT",
        help="pace the turns by the harness's prompt: wait for TEXT on stdout"
        " before the first line, and take a turn as handled when TEXT appears"
        " once more (default: when the log holds its turn/end)",
    )
    parser.add_argument(
        "--dialect",
        choices=DIALECTS,
        default=DEFAULT_DIALECT,
        help="the fake's dialect: wire format, usage fields and cache rules"
        f" (default {DEFAULT_DIALECT})",
    )
    parser.add_argument(
        "--base-url-suffix",
        default="",
        metavar="PATH",
        help="appended to the base URL (e.g. /v1 for clients that expect it)",
    )
    parser.add_argument("--strict", action="store_true", help="SHOULD warnings fail")
    add_driver_arguments(parser)
    add_gate_arguments(parser)
    add_show_argument(parser)
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="copy the log and write the captured requests (requests.jsonl) here",
    )
    add_report_file_arguments(parser.add_argument_group(REPORTS_TITLE))


def add_driver_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the driver styles, readiness, files and perturbations."""
    parser.add_argument(
        "--drive",
        choices=STYLES,
        default="lines",
        help="how turns reach the harness: lines (one per line on stdin, the"
        " default), process (one process per turn: --cmd, then --next-cmd),"
        " jsonl (one JSON line per turn, --send and --turn-end)",
    )
    parser.add_argument(
        "--next-cmd",
        metavar="COMMAND",
        help="--drive process: the command of every turn after the first"
        " ({prompt}, {prompt_file}, {workdir}, {log_path}, {session_id} filled"
        ' in), e.g. "pi -c -p {prompt}"',
    )
    parser.add_argument(
        "--send",
        metavar="JSON",
        help='--drive jsonl: the line written per turn, with "{prompt}" where the'
        ' text goes, e.g. \'{"type": "prompt", "message": "{prompt}"}\'',
    )
    parser.add_argument(
        "--turn-end",
        action="append",
        default=[],
        metavar="PATH=VALUE[,...]",
        help="--drive jsonl: an output line that ends a turn (a JSON object with"
        " these members), e.g. type=agent_end; repeat for more than one kind",
    )
    parser.add_argument(
        "--ready-when",
        metavar="SIGNAL",
        help="wait before a process's first input for stdout:TEXT, stderr:TEXT,"
        " file:PATH, log (its log changed) or settle:SECONDS (no output for that"
        " long; the last resort)",
    )
    parser.add_argument(
        "--config-template",
        action="append",
        default=[],
        metavar="SRC:DEST",
        help="write SRC to DEST before each process, with {base_url}, {api_key},"
        " {model} and {workdir} filled in (a relative DEST is in the working"
        " folder); repeatable",
    )
    parser.add_argument(
        "--config-overwrite",
        action="store_true",
        help="let --config-template write over an existing DEST outside the"
        " working folder (it is put back when the probe ends)",
    )
    parser.add_argument(
        "--model",
        default="deepseek-chat",
        metavar="NAME",
        help="the model name {model} stands for (default deepseek-chat)",
    )
    parser.add_argument(
        "--perturb",
        metavar="LIST",
        help="run perturbations: next-day, workspace, fresh-session, compaction"
        " (comma-separated) or all; each gets its own verdict line",
    )
    parser.add_argument(
        "--compact",
        metavar="TEXT",
        help="the turn that forces a compaction (a command such as /compact, or"
        " a JSON object line for --drive jsonl); needed by --perturb compaction",
    )


def _driver_settings(
    args: argparse.Namespace, resume: list[str] | None
) -> dict[str, object]:
    """The driver style's settings, or ValueError saying what is wrong."""
    style = args.drive
    settings: dict[str, object] = {"style": style, "model": args.model}
    if args.next_cmd is not None and style != "process":
        raise ValueError("--next-cmd is for --drive process")
    if style == "process":
        if resume is not None:
            raise ValueError(
                "--drive process runs a process per turn: give --next-cmd, not"
                " --resume-cmd"
            )
        if args.ready is not None:
            raise ValueError(
                "--ready paces turns on stdin; --drive process ends a turn when its"
                " process exits"
            )
        if args.next_cmd is None:
            raise ValueError(
                "--drive process needs --next-cmd, the command that continues the"
                " conversation (a harness that continues by itself: give --cmd again)"
            )
        settings["next_command"] = split_command(args.next_cmd, "--next-cmd")
    if (args.send is not None or args.turn_end) and style != "jsonl":
        raise ValueError("--send and --turn-end are for --drive jsonl")
    if style == "jsonl":
        if args.send is None or not args.turn_end:
            raise ValueError(
                "--drive jsonl needs --send (the line per turn) and --turn-end (the"
                " output line that ends it)"
            )
        if args.ready is not None:
            raise ValueError("--drive jsonl ends a turn by --turn-end, not --ready")
        check_send_template(args.send)
        settings["send"] = args.send
        settings["turn_end"] = tuple(parse_line_match(end) for end in args.turn_end)
    if args.ready_when is not None:
        if args.ready is not None:
            raise ValueError("give --ready or --ready-when, not both")
        settings["ready_when"] = parse_readiness(args.ready_when)
    settings["templates"] = tuple(
        parse_config_template(spec) for spec in args.config_template
    )
    if args.base_url_env is None and not args.config_template:
        raise ValueError(
            "say how the harness finds the fake: --base-url-env NAME or"
            " --config-template SRC:DEST (or both)"
        )
    perturbations = (
        parse_perturbations(args.perturb) if args.perturb is not None else ()
    )
    settings["perturbations"] = perturbations
    if "compaction" in perturbations and not args.compact:
        raise ValueError(
            "--perturb compaction needs --compact TEXT: what makes the harness compact"
        )
    if args.compact is not None and "compaction" not in perturbations:
        raise ValueError("--compact is for --perturb compaction")
    settings["compact"] = args.compact
    at_resume = [name for name in perturbations if name in AT_RESUME]
    if at_resume and style != "process" and resume is None:
        raise ValueError(
            f"--perturb {','.join(at_resume)} changes things before a resumed"
            " process: give --resume-cmd"
        )
    return settings


def _settings(args: argparse.Namespace, log_dir: str) -> ProbeSettings:
    """The settings, or ValueError saying which argument is wrong."""
    command = split_command(args.cmd, "--cmd")
    resume = (
        split_command(args.resume_cmd, "--resume-cmd")
        if args.resume_cmd is not None
        else None
    )
    problem = timeout_problem(args.timeout)
    if problem is not None:
        raise ValueError(problem)
    text = None
    if args.turns is not None:
        try:
            text = Path(args.turns).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(
                f"--turns {args.turns!r} cannot be read: {error}"
            ) from None
    driving = _driver_settings(args, resume)
    resumes = resume is not None
    if args.drive == "process":
        lines = [] if text is None else [line.strip() for line in text.splitlines()]
        asked = driving["perturbations"]
        assert isinstance(asked, tuple)
        resumes = RESUME_MARK in lines or any(name in AT_RESUME for name in asked)
    plan = plan_turns(text, resume=resumes)
    for name in (args.base_url_env, args.api_key_env):
        if name is not None and not _ENV_NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not an environment variable name")
    if args.log_glob is not None and not args.log_glob.strip():
        raise ValueError("--log-glob is empty: give the pattern of the harness's logs")
    if args.keep is not None:
        keep = Path(args.keep)
        if not args.keep.strip():
            raise ValueError("--keep is empty: give a folder to keep the evidence in")
        if keep.exists() and not keep.is_dir():
            raise ValueError(f"--keep {args.keep!r} is a file, not a folder")
        above = next((p for p in keep.absolute().parents if p.exists()), None)
        if above is not None and not above.is_dir():
            raise ValueError(f"--keep {args.keep!r}: {str(above)!r} is a file")
    if args.ready is not None and not args.ready:
        raise ValueError("--ready is empty: give the text the harness prints")
    log_dir_given = Path(args.log_dir) if args.log_dir is not None else None
    if (
        log_dir_given is not None
        and log_dir_given.exists()
        and not log_dir_given.is_dir()
    ):
        raise ValueError(f"--log-dir {args.log_dir!r} is a file, not a folder")
    suffix = args.base_url_suffix
    if suffix and not suffix.startswith("/"):
        raise ValueError(
            f"--base-url-suffix {suffix!r} is a path: it starts with '/' (e.g. /v1)"
        )
    uses_dir = any("{log_dir}" in word for word in [*command, *(resume or [])])
    no_log = args.log_dir is None and args.log_glob is None and not uses_dir
    log_paced = args.drive == "lines" and args.ready is None
    readiness = driving.get("ready_when")
    if no_log and getattr(readiness, "kind", None) == "log":
        raise ValueError(
            "--ready-when log waits for the harness's log, and none is looked for:"
            " give --log-dir DIR, --log-glob PATTERN or {log_dir} in --cmd"
        )
    if args.drive != "process":
        for option, words in (("--cmd", command), ("--resume-cmd", resume or [])):
            per_turn = [
                name
                for name in ("{prompt}", "{prompt_file}")
                if any(name in word for word in words)
            ]
            if per_turn:
                raise ValueError(
                    f"{option} holds {per_turn[0]}, which is filled in only with"
                    f" --drive process (a process per turn); --drive {args.drive}"
                    " writes each turn to the harness's stdin"
                )
    if no_log and log_paced:
        raise ValueError(
            "say where the harness writes its log: --log-dir DIR, --log-glob"
            " PATTERN, or {log_dir} in --cmd (a fresh folder is filled in);"
            " for a harness that writes none, --ready TEXT (its prompt) paces"
            " the turns and the cache is judged from the requests alone"
        )
    check_destinations(
        driving["templates"],  # type: ignore[arg-type]
        {"workdir": str(Path(log_dir) / "work"), "model": args.model},
        overwrite=args.config_overwrite,
    )
    if args.keep is not None:
        try:  # made last, once every other argument is right; before the probe
            Path(args.keep).mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ValueError(
                f"--keep {args.keep!r} cannot be made: {error.strerror or error}"
            ) from None
    default_logs = Path(log_dir) / "logs"
    default_logs.mkdir(exist_ok=True)
    finder = LogFinder(
        Path(args.log_dir).absolute() if args.log_dir is not None else default_logs,
        args.log_glob,
    )
    return ProbeSettings(
        command=command,
        resume_command=resume,
        first_turns=plan.first,
        resumed_turns=plan.resumed,
        base_url_env=args.base_url_env,
        api_key_env=args.api_key_env,
        base_url_suffix=args.base_url_suffix,
        finder=finder,
        log_dir=str(Path(args.log_dir).absolute())
        if args.log_dir
        else str(default_logs),
        timeout=args.timeout,
        ready=args.ready,
        workdir=str(Path(log_dir) / "work"),
        keyed=args.api_key_env is not None
        or any("{api_key}" in template.text for template in driving["templates"]),  # type: ignore[attr-defined]
        scratch=log_dir,
        **driving,  # type: ignore[arg-type]
        log_expected=not no_log,
    )


def run(args: argparse.Namespace) -> int:
    """Probe the harness, print the report; returns the exit status.

    SIGINT and SIGTERM unwind the probe (`reqfold.conformance.interrupts`), so the
    harness's whole tree and the fake are stopped on the way out.
    """
    return run_guarded("reqfold probe", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    problem = report_problem(args)  # refused before the harness starts
    if problem is not None:
        _stderr(f"reqfold probe: {problem}")
        return 2
    with tempfile.TemporaryDirectory(prefix="reqfold-probe-") as scratch:
        try:
            settings = _settings(args, scratch)
        except ValueError as error:
            _stderr(f"reqfold probe: {error}")
            return 2
        return _probe(args, settings)


def _stderr(text: str) -> None:
    with contextlib.suppress(OSError):
        print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def _stopping(driver: ProbeDriver) -> Iterator[None]:
    try:
        yield
    finally:
        driver.stop()


def _probe(args: argparse.Namespace, settings: ProbeSettings) -> int:
    started = time.monotonic()
    changed = threading.Condition()
    fake = ProbeFake(args.dialect, changed)
    workdir_note = create_workdir(Path(settings.workdir))
    with fake.serve() as url:
        print(f"reqfold probe: {' '.join(settings.command)}")
        print(f"working folder: {settings.workdir} (a git repository the probe owns)")
        if workdir_note:
            print(f"note: {workdir_note}")
        if settings.style == "process" and settings.next_command == settings.command:
            print(
                "note: --next-cmd is --cmd: every turn runs the same command, so"
                " the harness must continue the conversation by itself"
            )
        key_note = (
            f", a fresh key per process in {settings.api_key_env}"
            if settings.api_key_env
            else ""
        )
        where = (
            [f"in {settings.base_url_env}{key_note}"] if settings.base_url_env else []
        )
        where += [f"in {t.destination}" for t in settings.templates]
        if not settings.keyed:
            where.append("requests attributed to processes by when they ran")
        print(
            f"fake provider: {args.dialect} on {url}{settings.base_url_suffix}"
            f" ({'; '.join(where)})",
            flush=True,
        )
        for template in settings.templates:
            unknown = unknown_placeholders(template)
            if unknown:
                print(
                    f"note: --config-template {template.source} holds"
                    f" {', '.join(unknown)}, not a placeholder (only {{base_url}},"
                    " {api_key}, {model} and {workdir} are filled in): left as"
                    " it is"
                )
        driver = ProbeDriver(settings, fake)
        with _stopping(driver):
            evidence = driver.run()
    temporary = None if args.log_dir is not None else Path(settings.log_dir)
    return _report(args, evidence, time.monotonic() - started, temporary)


def _report(
    args: argparse.Namespace,
    evidence: ProbeEvidence,
    seconds: float,
    temporary: Path | None = None,
) -> int:
    """Print what the probe found and its verdict; the exit status.

    `temporary` is the fresh folder given as ``{log_dir}``, deleted when the
    probe ends: a log there is said to be deleted, with the way to keep it.
    """
    forced = Revision(args.revision) if args.revision else None
    choice = choose_revision(evidence.log, forced, evidence.log_path)
    startup = next((run.start_error for run in evidence.runs if run.start_error), None)
    checks: list[Check] = []
    alone = cache_alone(args, evidence)
    judgement = judge_probe_cache(args, evidence)
    if startup is None or len(evidence.runs) > 1:
        if alone:
            # no log rule, but a turn fed and not handled is still a failure
            checks = turn_checks(evidence) + cache_checks(judgement.findings)
        else:
            # the log rebuilds chat-completions requests: another wire is named
            spoken = dialect_named(args.dialect).wire
            wire = None if spoken == CHAT_COMPLETIONS else args.dialect
            checks = count_checks(evidence) + log_checks(evidence, choice, wire=wire)
            checks += cache_checks(f for f in judgement.findings if GATE in f.detail)
        checks += perturbation_checks(evidence, judgement)
    print()
    for run in evidence.runs:
        _print_run(run, evidence)
    for run in evidence.fresh_runs:
        _print_run(run, evidence, fresh=True)
    if evidence.log_path is not None:
        print(
            f"log: {evidence.log_path}; revision {choice.revision.value}"
            f" ({choice.source})"
        )
        inside = temporary is not None and Path(evidence.log_path).is_relative_to(
            temporary
        )
        if inside and not args.keep:
            print(
                "  (in a temporary folder deleted when the probe ends: --keep DIR"
                " keeps the log and the requests the fake received)"
            )
        for other in evidence.other_logs:
            print(f"note: {other} changed too; the most recent one was checked")
    for note in evidence.notes:
        print(f"note: {note}")
    tried = Counter(f"{c.method} {c.path}" for c in evidence.unserved)
    for what, times in sorted(tried.items()):
        print(
            f"note: the harness sent {times} request(s) to {what}, which the fake"
            " does not serve (captured, answered 404/405)"
        )
    for check in checks:
        said_below = PERTURBATION in check.detail  # under Perturbations
        if check.outcome is Outcome.SKIP and not said_below:  # never silent
            print(f"note: {check.id} [{','.join(check.rules)}]: {check.message}")
    if startup is not None:
        print(f"error: the harness could not be started: {startup}")
    if args.show == "all" and checks:
        print()
        for check in checks:
            for line in check_lines(check, with_part=False):
                print(line)
    if any(run.problem for run in evidence.runs):
        for run in evidence.runs:
            if run.problem and run.output:
                print(f"\n{run.name}: what the harness printed last")
                print(printable(run.output.rstrip()))
    perturbed = [c for c in checks if PERTURBATION in c.detail]
    if perturbed:
        print()
        print("Perturbations (expected outcome; what happened)")
        for check in perturbed:
            print(f"  {check.name}: {check.outcome.value} {check.message}")
    rows = timeline(evidence)
    if not rows and (evidence.runs or evidence.fresh_runs) and startup is None:
        print("\nno request reached the fake: there is no cache to judge")
    elif alone:
        print(
            "\nno session log looked for (no --log-dir, --log-glob or {log_dir}):"
            " the cache is judged from the requests alone (docs/cache.md)\n"
        )
        print(render_text(judgement, strict=args.strict, verdict=False))
    elif rows:
        print()
        _print_timeline(rows)
    colour = colour_wanted(sys.stdout, os.environ)
    print()
    show_all = args.show == "all"
    for line in rule_lines(rule_table(checks), show_all=show_all, colour=colour):
        print(line)
    problems = problem_lines(checks, colour=colour, with_part=False)
    if problems:
        print()
    for line in problems:
        print(line)
    status = exit_status(checks, strict=args.strict, startup_error=startup is not None)
    if args.keep and not _keep(Path(args.keep), evidence) and status == 0:
        status = 2  # the evidence asked for is lost: never a silent pass
    verdict = verdict_text(status, checks, reasons=NO_VERDICT_REASONS)
    commit_verdict()
    print()
    print(f"{count_text(len(checks), 'check')} in {seconds:.1f} s")
    print(verdict_line(status, verdict, colour=colour), flush=True)
    return write_probe_reports(
        args,
        evidence,
        checks,
        revision=choice.revision.value,
        startup_error=startup,
        status=status,
        verdict=verdict,
        seconds=seconds,
        temporary=temporary,
    )


def _print_run(
    run: ProcessRecord, evidence: ProbeEvidence, *, fresh: bool = False
) -> None:
    if run.start_error is not None:
        print(f"{run.name}: not started ({run.start_error})")
        return
    captures, owners = (
        (evidence.fresh_captures, evidence.fresh_capture_runs)
        if fresh
        else (evidence.captures, evidence.capture_runs)
    )
    statuses = [
        capture.status
        for capture, owner in zip(captures, owners, strict=True)
        if owner == run.name
    ]
    refused = sum(1 for status in statuses if status != 200)
    requests = f"{len(statuses)} request(s)" + (
        f" ({refused} answered with an error)" if refused else ""
    )
    ending = (
        "killed (it did not exit)"
        if run.killed_at_end or run.exit_status is None
        else f"exit status {run.exit_status}"
    )
    phase = " (fresh session)" if run.phase == "fresh" else ""
    print(
        f"{run.name}{phase}: {len(run.turns)} of {run.planned} turn(s) fed,"
        f" {run.handled} handled, {requests}; {ending}"
    )
    if run.problem:
        print(f"  stopped: {run.problem}")


def _print_timeline(rows: list[TimelineRow]) -> None:
    print("Cache, turn by turn (tokens as the fake counted them)")
    print(
        f"  {'run':<6} {'turn':>4}  {'request':>7}  {'prompt':>6}  {'cached':>6}"
        f"  {'uncached':>8}  what the fake saw"
    )
    for row in rows:
        turn = "-" if row.turn is None else str(row.turn)
        note = row.note if row.status == 200 or row.note else f"status {row.status}"
        print(
            f"  {row.run:<6} {turn:>4}  {'#' + str(row.index):>7}  {row.prompt:>6}"
            f"  {row.cached:>6}  {row.uncached:>8}  {note}"
        )
    prompt = sum(row.prompt for row in rows)
    cached = sum(row.cached for row in rows)
    ratio = f"{cached / prompt:.0%}" if prompt else "-"
    print(f"  total: {cached} of {prompt} prompt tokens cached ({ratio})")


_KEPT_CAPTURES = frozenset(
    {"requests.jsonl", "main-requests.jsonl", "fresh-requests.jsonl"}
)
"""The names ``--keep`` gives captured requests."""


def _write_capture(path: Path, lines: list[JsonObject]) -> None:
    """Write captured requests as JSON lines to a new file."""
    with open(path, "x", encoding="utf-8") as handle:
        for line in lines:
            handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def _copy_log(folder: Path, log_path: str | None, prefix: str) -> str | None:
    """Copy a session's log into `folder` under its own name (with `prefix`;
    ``log-`` in front of a name the kept captures use); the name, or None."""
    if log_path is None:
        return None
    name = prefix + Path(log_path).name
    if name in _KEPT_CAPTURES:  # the harness's own name for its log
        name = f"log-{name}"
    with open(log_path, "rb") as source, open(folder / name, "xb") as copy:
        shutil.copyfileobj(source, copy)
    return name


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""What a POSIX shell takes as an environment variable name."""


def _keep(folder: Path, evidence: ProbeEvidence) -> bool:
    """Copy the log and the captured requests into `folder`, or a fresh
    sub-folder of it when it holds files already (`fresh_folder`: nothing
    there is overwritten); False if it failed. With a fresh session, each
    session's log and its own requests are kept too, as pairs that
    ``reqfold check LOG --requests CAPTURE`` takes."""
    try:
        folder = fresh_folder(folder)
        capture = folder / "requests.jsonl"
        _write_capture(capture, kept_capture_lines(evidence))
        kept = [f"the captured requests as {capture.name}"]
        log_name = _copy_log(folder, evidence.log_path, "")
        if log_name is not None:
            kept.insert(0, f"the log as {log_name}")
        if evidence.fresh_runs:
            pairs = []
            for session, log_path in (
                ("main", evidence.log_path),
                ("fresh", evidence.fresh_log_path),
            ):
                requests = folder / f"{session}-requests.jsonl"
                _write_capture(requests, kept_capture_lines(evidence, session))
                name = (
                    log_name
                    if session == "main"
                    else _copy_log(folder, log_path, "fresh-")
                )
                pairs.append(f"{name or '(no log)'} with {requests.name}")
            kept.append(f"each session's log with its requests ({'; '.join(pairs)})")
        print(f"kept: {' and '.join(kept)} in {folder}")
    except OSError as error:
        _stderr(f"reqfold probe: --keep {folder}: {error.strerror or error}")
        return False
    return True
