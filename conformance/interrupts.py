"""Stopping a command that runs an implementation: SIGINT, SIGTERM, a closed pipe.

`run_guarded` runs a command's body with SIGTERM and SIGINT turned into an
`Interrupted` exception, so every adapter, server and temporary folder is
closed on the way out (an adapter runs in a session of its own, so nothing
else would end it), and turns the ways a run can end early into exit
statuses without a traceback: 130 or 143 when interrupted, 3 when the
reader of stdout went away or the suite itself failed unexpectedly.

Only the first signal interrupts; later ones are remembered, so a second
Ctrl-C cannot break off the cleanup the first one started.

A command's verdict is its commit point (`commit_verdict`): a signal before
it stops the run with no verdict; one after it (while the reports are
written and the adapters closed) is too late to stop anything, so it is
said, and the verdict and its exit status stand. Either way what is printed
and the exit status agree.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

NO_VERDICT = 3


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGINT, raised as an interrupt: hypothesis and asyncio let it
    through (a SystemExit would be taken for a failing example)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_received: list[int] = []
"""The signals received during the current guarded run, in order."""


def stop_requested() -> int | None:
    """The signal that asked the current run to stop, or None."""
    return _received[0] if _received else None


def raise_if_stopped() -> None:
    """Raise `Interrupted` if a signal asked the run to stop.

    The exception a signal raises can be lost when it lands in code that
    swallows what it raises (a garbage-collection callback): calling this
    at each step makes the stop stick.
    """
    if _received and not _committed:
        raise Interrupted(_received[0])


_deferring = 0
"""How many `signals_deferred` blocks are open (nested blocks count each)."""
_pending = False
"""The first signal came inside such a block: it is raised when the block ends."""


_committed = False
"""The current run gave its verdict: signals are only recorded from then on."""


def commit_verdict() -> None:
    """The run is about to give its verdict: raise `Interrupted` if a signal
    came first (one held back by `signals_deferred` too); after this, a
    signal no longer stops the run (module docstring)."""
    global _committed, _pending
    if _received:
        _pending = False
        raise Interrupted(_received[0])
    _committed = True


def _on_signal(signum: int, frame: object) -> None:
    global _pending
    _received.append(signum)
    if len(_received) == 1 and not _committed:
        if _deferring:
            _pending = True
            return
        raise Interrupted(signum)


def signals_deferred_now() -> bool:
    """Whether a `signals_deferred` block is open."""
    return _deferring > 0


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block is done, then interrupt (while
    `run_guarded`'s handler is installed; other handlers are not deferred).

    Python runs a signal's handler on the main thread between two
    bytecodes, whichever thread the kernel gave the signal to, so masking
    the signal on the main thread (``pthread_sigmask``) does not keep it
    out of a block while other threads run: the handler itself waits.
    """
    global _deferring, _pending
    if threading.current_thread() is not threading.main_thread():
        yield  # the handler runs on the main thread: nothing to wait for here
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
        if not _deferring and _pending:
            _pending = False
            # also when the block raised: the stop must not be lost (the
            # block's own exception stays attached as the context)
            raise Interrupted(_received[0])


def run_guarded(prog: str, body: Callable[[], int]) -> int:
    """Run `body` with SIGINT and SIGTERM handled; returns the exit status."""
    global _pending, _committed
    _received.clear()
    _committed = False
    previous = {
        signum: signal.signal(signum, _on_signal)
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        return body()
    except KeyboardInterrupt as stop:
        signum = stop.signum if isinstance(stop, Interrupted) else signal.SIGINT
        say_stderr(f"{prog}: interrupted; no verdict")
        return 128 + signum
    except BrokenPipeError:
        # The reader went away (``| head``): stop quietly; stdout goes to
        # devnull so the exit flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return NO_VERDICT
    except Exception as error:  # a bug of ours: say so, and it is no verdict
        say_stderr(
            f"{prog}: internal error, no verdict: {type(error).__name__}: {error}"
        )
        return NO_VERDICT
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if _committed and _received:
            say_stderr(f"{prog}: interrupted after the verdict was given; it stands")
        _received.clear()
        _pending = False
        _committed = False


def say_stderr(text: str) -> None:
    """Print one line to stderr, even when stderr is gone."""
    with contextlib.suppress(OSError):
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
