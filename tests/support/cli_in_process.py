"""``reqfold`` called inside the test's own process, with a time limit.

A child ``python -m reqfold.conformance.cli`` spends about 0.45 s of CPU importing
the suite before it does anything; tests about what a command reports,
rather than about the process boundary, call `reqfold_here` instead. What
is under test is untouched by this: an adapter or harness given with
``--impl`` or ``--cmd`` is still a real child process, and the fake
provider still serves on 127.0.0.1. Tests of what only a process shows
(exit statuses through ``python -m``, signals, a traceback on stderr) keep
`commands.reqfold`.

Its stdout must encode as UTF-8, as a child's must (an `io.StringIO`
takes any text, even a lone surrogate a process could not write): the
test fails otherwise. A run that hangs must fail its test, never block
it, as a child's ``subprocess.run(timeout=...)`` did. After `limit`
seconds (SIGALRM) the run is stopped as SIGTERM would stop it
(`reqfold.conformance.interrupts`: its adapters killed at once, not asked to shut
down), or, outside the part a signal can stop, by raising `TooLong`;
either way the test fails saying so. Importable as ``cli_in_process``
(`pythonpath = ["tests/support"]`).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from reqfold.conformance import interrupts
from reqfold.conformance.cli import main


class TooLong(BaseException):
    """Raised in a run that outlived its limit. A BaseException, so the
    suite's own ``except Exception`` (an internal error, no verdict) and
    ``except KeyboardInterrupt`` (interrupted) let it through."""


@contextlib.contextmanager
def _environment(changes: Mapping[str, str]) -> Iterator[None]:
    """`changes` set in ``os.environ`` (which child processes inherit), then undone."""
    before = {name: os.environ.get(name) for name in changes}
    os.environ.update(changes)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@contextlib.contextmanager
def _time_limit(seconds: float) -> Iterator[list[bool]]:
    """Stop the run in this (the main) thread once `seconds` have passed.

    Yields a list that holds True once the limit was reached.
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("reqfold_here needs the main thread (signals)")
    expired: list[bool] = []

    def expire(signum: int, frame: Any) -> None:
        expired.append(True)
        if signal.getsignal(signal.SIGTERM) is interrupts._on_signal:
            interrupts._on_signal(signal.SIGTERM, frame)  # raises Interrupted
            if interrupts.signals_deferred_now():
                return  # raised once the adapter being killed is gone
        raise TooLong

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield expired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def reqfold_here(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    limit: float = 120,
) -> tuple[int, str, str]:
    """``reqfold ARGS`` run by `reqfold.conformance.cli.main` in this process.

    Returns the exit status, stdout and stderr as a child would give them:
    argparse's own exits (bad arguments) become their status. `env` holds
    variables set for the run (and its children) on top of this process's
    own; a run longer than `limit` seconds fails the test.
    """
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.ExitStack() as stack:
            if cwd is not None:
                stack.enter_context(contextlib.chdir(cwd))
            stack.enter_context(_environment(env or {}))
            stack.enter_context(contextlib.redirect_stdout(out))
            stack.enter_context(contextlib.redirect_stderr(err))
            expired = stack.enter_context(_time_limit(limit))
            try:
                status = main(list(args))
            except SystemExit as exit_:
                code = exit_.code
                status = code if isinstance(code, int) else (0 if code is None else 1)
    except TooLong:
        expired = [True]
    if expired:
        pytest.fail(
            f"reqfold {' '.join(args)} did not end within {limit} s:\n"
            f"{out.getvalue()}\n{err.getvalue()}"
        )
    text = out.getvalue()
    try:  # a process's stdout is strict UTF-8; a StringIO takes anything
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        pytest.fail(
            f"reqfold {' '.join(args)} wrote to stdout what a process could not"
            f" write as UTF-8 ({error}):\n{text[:4000]!r}"
        )
    return status, text, err.getvalue()
