"""Perturbations: the changes between processes under which real caches broke.

``--perturb next-day,workspace,fresh-session,compaction`` (docs/probe.md,
"Perturbations"). Each has an expected outcome and its own verdict line,
judged here from the fake's per-request diagnostics (pure):

- ``next-day``: the resumed process runs with its clock a day ahead
  (libfaketime, preloaded), the fake's clock unmoved; its first request
  should still extend the last one of the process before (CACHE-3, and a
  date in the opening is CACHE-2). Where the preload cannot reach any
  one process of the run (a statically linked or Go program, even one a
  launcher started; a process that did not map the library), the line
  says so and is skipped, never a pass;
- ``workspace``: a file added and a git change made in the working folder
  before the resumed process; expected as for next-day;
- ``fresh-session``: a second session in the same working folder; its
  requests should share the static opening (tools and system text) with
  the first session's (CACHE-2);
- ``compaction``: a turn that forces one (``--compact TEXT``) and two
  turns after it; the summarizer's request and the first turn after it
  break the cache as expected, and the second turn after it should extend
  what was sent from the compaction on (CACHE-1, a MUST: a fail).
"""

from __future__ import annotations

import glob
import os
import shutil
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.verdict import Check
from reqfold.fakes import PROFILES

PERTURBATIONS = ("next-day", "workspace", "fresh-session", "compaction")
AT_RESUME = ("next-day", "workspace")
"""The perturbations applied between the first and the resumed process."""
FOLLOW_UP = "Go on: in one sentence, what have we talked about so far?"
"""The turn fed after a compaction: its request is the expected break."""
FOLLOW_UP_AGAIN = "And in one word?"
"""The turn after that: its request should extend the one before."""
CACHE_KEY_FIELDS = tuple(
    sorted({name for profile in PROFILES.values() for name in profile.isolation_fields})
)
"""Request fields a provider keeps caches apart by (`prompt_cache_key`,
`user_id`): a new value is a new cache partition, which shares nothing."""
LIBRARY_GLOBS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)


def parse_perturbations(text: str) -> tuple[str, ...]:
    """``next-day,workspace`` or ``all``; ValueError names an unknown one."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if names == ["all"]:
        return PERTURBATIONS
    unknown = [name for name in names if name not in PERTURBATIONS]
    if unknown or not names:
        raise ValueError(
            f"--perturb {text!r}: give some of {', '.join(PERTURBATIONS)}, or all"
        )
    if (twice := next((n for n in names if names.count(n) > 1), None)) is not None:
        raise ValueError(f"--perturb {text!r}: {twice} is given twice; give it once")
    return tuple(name for name in PERTURBATIONS if name in names)


def faketime_library() -> str | None:
    """The libfaketime shared library, where the Debian package put it."""
    for pattern in LIBRARY_GLOBS:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def next_day_env(library: str, env: Mapping[str, str]) -> dict[str, str]:
    """The environment of a process whose wall clock runs a day ahead.

    Monotonic clocks are left alone (timers and timeouts stay right); the
    preload is inherited by everything the harness starts.
    """
    preload = " ".join(filter(None, [library, env.get("LD_PRELOAD", "")]))
    return {
        **env,
        "LD_PRELOAD": preload,
        "FAKETIME": "+1d",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


def executable_of(argv0: str) -> str | None:
    """The program a command runs: on PATH, then through a ``#!`` line."""
    path = argv0 if os.sep in argv0 else shutil.which(argv0)
    for _ in range(4):
        if path is None or not os.path.isfile(path):
            return None
        path = os.path.realpath(path)
        try:
            with open(path, "rb") as file:
                head = file.read(256)
        except OSError:
            return None
        if not head.startswith(b"#!"):
            return path
        words = head[2:].split(b"\n", 1)[0].split()
        if not words:
            return None
        program = words[0].decode("utf-8", "replace")
        if program.endswith("/env") and len(words) > 1:
            path = shutil.which(words[-1].decode("utf-8", "replace"))
        else:
            path = program
    return None


def is_static_elf(path: str) -> bool:
    """Whether an ELF program has no interpreter (statically linked): a
    preloaded library never loads into it."""
    try:
        with open(path, "rb") as file:
            header = file.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:
                return False
            order = "<" if header[5] == 1 else ">"
            phoff = struct.unpack_from(order + "Q", header, 32)[0]
            phentsize, phnum = struct.unpack_from(order + "HH", header, 54)
            file.seek(phoff)
            table = file.read(phentsize * phnum)
    except (OSError, struct.error, IndexError):
        return False
    for number in range(phnum):
        kind = struct.unpack_from(order + "I", table, number * phentsize)[0]
        if kind == 3:  # PT_INTERP
            return False
    return True


def is_go_program(path: str) -> bool:
    """Whether an ELF program was built by Go (a ``.go.buildinfo`` section):
    Go reads the clock through the vDSO, never the C library, so a preloaded
    clock does not move its time even when it loads."""
    try:
        with open(path, "rb") as file:
            header = file.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:
                return False
            order = "<" if header[5] == 1 else ">"
            shoff = struct.unpack_from(order + "Q", header, 40)[0]
            shentsize, shnum, shstrndx = struct.unpack_from(order + "HHH", header, 58)
            if not shoff or shstrndx >= shnum:
                return False
            file.seek(shoff + shstrndx * shentsize)
            entry = file.read(shentsize)
            offset, size = struct.unpack_from(order + "QQ", entry, 24)
            if size > 1 << 20:
                return False
            file.seek(offset)
            names = file.read(size)
    except (OSError, struct.error, IndexError):
        return False
    return b".go.buildinfo" in names


def maps_library(pid: int, library: str) -> bool | None:
    """Whether a live process mapped `library`; None when that cannot be told
    yet: its maps cannot be read, or the dynamic loader has not loaded libc
    yet (a preload is mapped before libc, so libc without it means never)."""
    name = os.path.basename(library)
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            lines = maps.read().splitlines()
    except OSError:
        return None
    if any(name in line for line in lines):
        return True
    if any("/libc.so" in line or "/libc-" in line for line in lines):
        return False
    return None


def clock_missed(pid: int, library: str) -> tuple[bool | None, str | None]:
    """Whether a live process runs on the preloaded clock: (mapped, why not).

    `mapped` is `maps_library`'s answer; `why not` names the process when
    the clock cannot reach it: a static program (`/proc/PID/exe`: never
    loads a preload, and never maps libc, so its maps alone cannot tell),
    a Go program (reads the clock past it), or one whose libc came without
    the library (LD_PRELOAD cleared). (None, None): cannot be told yet.
    """
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        exe = None
    mapped = maps_library(pid, library)
    if exe is not None and is_static_elf(exe):
        return mapped, f"{exe} (pid {pid}) is statically linked"
    if exe is not None and is_go_program(exe):
        return mapped, f"{exe} (pid {pid}) is a Go program"
    if mapped is False:
        return mapped, f"{exe or 'pid ' + str(pid)} (pid {pid}) did not map libfaketime"
    return mapped, None


# ------------------------------------------------------------------ judging


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """What judging a perturbation needs of one captured request."""

    index: int
    process: int
    """The position of the process that sent it (0, 1, ...)."""
    diagnostic: Mapping[str, Any] | None
    body: Any


PERTURBATION = "perturbation"
"""The `Check.detail` member that marks a perturbation's check: its name."""
PERTURBATION_REQUEST = "request"
"""The `Check.detail` member of a perturbation's check that holds the request
it is about (a break's, for its cause)."""


def perturbation_check(
    *,
    name: str,
    rules: tuple[str, ...],
    outcome: Outcome,
    message: str,
    at: int | None = None,
) -> Check:
    """One perturbation's verdict line, as the probe's check
    ``perturb/<name>``; `at` is the request it is about."""
    return Check(
        part="probe",
        id=f"perturb/{name}",
        name=name,
        revision="",
        rules=rules,
        outcome=outcome,
        message=message,
        detail={PERTURBATION: name}
        if at is None
        else {PERTURBATION: name, PERTURBATION_REQUEST: at},
    )


def judge_resume(
    names: Sequence[str],
    requests: Sequence[Request],
    boundary: int,
    *,
    clock_problem: str | None = None,
    applied: str = "",
) -> Check:
    """next-day and/or workspace: the first process from `boundary` on should
    extend a request of a process before it."""
    name = "+".join(names)
    rules = ("CACHE-3", "CACHE-2")
    if clock_problem is not None:
        return perturbation_check(
            name=name,
            rules=rules,
            outcome=Outcome.SKIP,
            message=f"not judged: {clock_problem}",
        )
    after = [r for r in requests if r.process == boundary]
    before = {r.index for r in requests if r.process < boundary}
    did = f" ({applied})" if applied else ""
    if not after or not before:
        return perturbation_check(
            name=name,
            rules=rules,
            outcome=Outcome.SKIP,
            message=f"not judged{did}: no request before and after the change",
        )
    for request in after:
        diagnostic = request.diagnostic or {}
        if (
            diagnostic.get("relation") in ("append", "repeat")
            and diagnostic.get("closest_request") in before
        ):
            return perturbation_check(
                name=name,
                rules=rules,
                outcome=Outcome.PASS,
                at=request.index,
                message=(
                    f"expected: the resumed process extends the one before{did};"
                    f" #{request.index} extends #{diagnostic['closest_request']}"
                    f" ({diagnostic.get('cached_tokens', 0)} of"
                    f" {diagnostic.get('prompt_tokens', 0)} tokens cached)"
                ),
            )
    best = _closest_to(after, before)
    return perturbation_check(
        name=name,
        rules=rules,
        outcome=Outcome.WARN,
        at=best.index,
        message=(
            f"expected: the resumed process extends the one before{did};"
            f" the cache broke: {_describe_break(best, _earlier(requests, boundary))}"
        ),
    )


def judge_fresh_session(requests: Sequence[Request], boundary: int) -> Check:
    """fresh-session: the new session keeps the static opening (tools, system)."""
    rules = ("CACHE-2",)
    after = [r for r in requests if r.process >= boundary]
    before = {r.index for r in requests if r.process < boundary}
    if not after or not before:
        return perturbation_check(
            name="fresh-session",
            rules=rules,
            outcome=Outcome.SKIP,
            message="not judged: no request in both sessions",
        )
    best = _closest_to(after, before)
    diagnostic = best.diagnostic or {}
    divergence = diagnostic.get("divergence")
    cached = diagnostic.get("cached_tokens", 0)
    if diagnostic.get("relation") in ("append", "repeat") or (
        isinstance(divergence, dict) and not _in_static_opening(divergence, best.body)
    ):
        where = (
            f", first difference at {divergence.get('field')}"
            if isinstance(divergence, dict)
            else ""
        )
        outcome, found = (
            Outcome.PASS,
            f"shared (#{best.index}: {cached} tokens cached from"
            f" #{diagnostic.get('closest_request')}{where})",
        )
    else:
        outcome, found = (
            Outcome.WARN,
            f"lost: {_describe_break(best, _earlier(requests, boundary))}",
        )
    return perturbation_check(
        name="fresh-session",
        rules=rules,
        outcome=outcome,
        at=best.index,
        message=f"expected: the new session shares the static opening; {found}",
    )


def judge_compaction(
    requests: Sequence[Request],
    during: Sequence[int],
    follow_up: Sequence[int],
    after: Sequence[int] = (),
) -> Check:
    """compaction: requests `during` the compaction turn; then `follow_up`,
    the second turn after it, should extend one sent from the compaction on
    (the first turn after it is the expected break)."""
    rules = ("CACHE-1",)
    by_index = {r.index: r for r in requests}
    if not during:
        return perturbation_check(
            name="compaction",
            rules=rules,
            outcome=Outcome.SKIP,
            message="not judged: the compaction turn sent no request (no compaction?)",
        )
    if not follow_up:
        return perturbation_check(
            name="compaction",
            rules=rules,
            outcome=Outcome.SKIP,
            message="not judged: the second turn after the compaction sent no request",
        )
    start = min(during)
    side = [
        index
        for index in during
        if (by_index[index].diagnostic or {}).get("relation") in ("first", "diverged")
    ]
    broke = side or [
        index
        for index in after
        if (by_index[index].diagnostic or {}).get("relation") in ("first", "diverged")
    ]
    if not broke:
        return perturbation_check(
            name="compaction",
            rules=rules,
            outcome=Outcome.SKIP,
            message=(
                "not judged: nothing broke at the compaction turn or the turn after"
                " it, so the harness did not compact (is --compact its command?)"
            ),
        )
    note = (
        f"; the compaction's own request(s) {', '.join(f'#{i}' for i in side)}"
        " broke from the conversation (expected)"
        if side
        else ""
    )
    for index in follow_up:
        diagnostic = by_index[index].diagnostic or {}
        closest = diagnostic.get("closest_request")
        if (
            diagnostic.get("relation") in ("append", "repeat")
            and isinstance(closest, int)
            and closest >= start
        ):
            return perturbation_check(
                name="compaction",
                rules=rules,
                outcome=Outcome.PASS,
                message=(
                    "expected: a break at the compaction, then append-only;"
                    f" #{index} extends #{closest}{note}"
                ),
            )
    first = by_index[follow_up[0]]
    return perturbation_check(
        name="compaction",
        rules=rules,
        outcome=Outcome.FAIL,
        at=first.index,
        message=(
            "expected: a break at the compaction, then append-only; the second turn"
            f" after it does not extend what was sent from #{start} on:"
            f" {_describe_break(first)}{note}"
        ),
    )


def _closest_to(after: Sequence[Request], before: set[int]) -> Request:
    """The request of `after` that shares the most with one of `before`."""

    def shared(request: Request) -> int:
        diagnostic = request.diagnostic or {}
        if diagnostic.get("closest_request") not in before:
            return -1
        value = diagnostic.get("shared_tokens", 0)
        return value if isinstance(value, int) else 0

    return max(after, key=shared)


def _earlier(requests: Sequence[Request], boundary: int) -> list[Request]:
    return [r for r in requests if r.process < boundary]


def new_cache_key(request: Request, earlier: Sequence[Request]) -> str | None:
    """The cache-key field whose value in `request` no earlier request sent
    (a new partition), said with both values; None when there is none."""
    body = request.body if isinstance(request.body, dict) else {}
    for name in CACHE_KEY_FIELDS:
        before = [r.body.get(name) for r in earlier if isinstance(r.body, dict)]
        value = body.get(name)
        if before and value not in before:
            return (
                f"its {name} {_short(value)} is new (earlier"
                f" {_short(before[-1])}), and the provider keeps each {name}'s"
                " cache apart, so nothing could be shared"
            )
    return None


def _describe_break(request: Request, earlier: Sequence[Request] = ()) -> str:
    diagnostic = request.diagnostic or {}
    relation = diagnostic.get("relation")
    head = (
        f"#{request.index} ({diagnostic.get('cached_tokens', 0)} of"
        f" {diagnostic.get('prompt_tokens', 0)} tokens cached)"
    )
    if relation == "first" or diagnostic.get("closest_request") is None:
        partition = new_cache_key(request, earlier)
        if partition is not None:
            return f"{head} starts a new cache partition: {partition}"
        return f"{head} shares no opening with any earlier request"
    divergence = diagnostic.get("divergence")
    if not isinstance(divergence, dict):
        return f"{head} {relation} #{diagnostic.get('closest_request')}"
    return (
        f"{head} differs from #{diagnostic.get('closest_request')} at"
        f" {divergence.get('field')}, character {divergence.get('char_offset')}:"
        f" earlier {_short(divergence.get('earlier'))},"
        f" now {_short(divergence.get('current'))}"
    )


def _in_static_opening(divergence: Mapping[str, Any], body: Any) -> bool:
    """Whether a divergence lies in the tools or the system text."""
    segment = str(divergence.get("segment", ""))
    if segment.startswith(("tools", "system", "instructions")):
        return True
    index = divergence.get("message_index")
    messages = body.get("messages") if isinstance(body, dict) else None
    if isinstance(index, int) and isinstance(messages, list) and index < len(messages):
        message = messages[index]
        return isinstance(message, dict) and message.get("role") in (
            "system",
            "developer",
        )
    return False


def _short(text: object, limit: int = 80) -> str:
    value = repr(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"
