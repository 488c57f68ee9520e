"""The harness as a child process: started, fed, read and ended.

The harness leads a session of its own (so a group kill reaches what it
starts) with stdin, stdout and stderr on pipes. Reader threads drain
stdout and stderr as they come (a harness may print freely; a full pipe
would block it), keeping a bounded tail of each for messages and counting
the ready text when one is given. Every change (output, exit) notifies
the probe's condition, so the driver waits on conditions, never on sleeps.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Mapping

from reqfold.conformance.probe.perturb import clock_missed
from reqfold.conformance.probe.tree import ProcessTree

TAIL_BYTES = 4096
"""How much of each output stream is kept for messages."""
LINE_LIMIT = 64 * 1024 * 1024
"""The longest output line matched against --turn-end (longer ones are not)."""


class _Stream:
    """One output pipe, drained by a thread."""

    def __init__(
        self,
        fd: int,
        changed: threading.Condition,
        marker: bytes | None,
        line_match: Callable[[bytes], bool] | None = None,
    ) -> None:
        self.tail = b""
        self.total = 0
        self.markers = 0
        self.matched_lines = 0
        self.last_output = time.monotonic()
        self._carry = b""
        self._marker = marker
        self._line_match = line_match
        self._line = b""
        self._changed = changed
        self.thread = threading.Thread(
            target=self._pump, args=(fd,), name="probe-reader", daemon=True
        )

    def _pump(self, fd: int) -> None:
        try:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                with self._changed:
                    self.total += len(chunk)
                    self.last_output = time.monotonic()
                    self.tail = (self.tail + chunk)[-TAIL_BYTES:]
                    if self._marker:
                        self._count(chunk, self._marker)
                    if self._line_match is not None:
                        self._match_lines(chunk, self._line_match)
                    self._changed.notify_all()
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _count(self, chunk: bytes, marker: bytes) -> None:
        """Count markers, also those split across two reads."""
        window = self._carry + chunk
        found = window.count(marker)
        self.markers += found
        if found:
            window = window[window.rfind(marker) + len(marker) :]
        keep = len(marker) - 1
        self._carry = window[len(window) - keep :] if keep else b""

    def _match_lines(self, chunk: bytes, match: Callable[[bytes], bool]) -> None:
        """Count complete lines that `match` (a line may span reads)."""
        *lines, rest = (self._line + chunk).split(b"\n")
        self.matched_lines += sum(1 for line in lines if match(line))
        self._line = rest if len(rest) <= LINE_LIMIT else b""

    def text(self) -> str:
        """The kept tail, decoded leniently."""
        return self.tail.decode("utf-8", "replace")


class HarnessProcess:
    """One run of the harness command."""

    def __init__(
        self,
        argv: list[str],
        env: Mapping[str, str],
        changed: threading.Condition,
        *,
        ready: str | None = None,
        ready_stderr: str | None = None,
        turn_end: Callable[[bytes], bool] | None = None,
        cwd: str | None = None,
    ) -> None:
        self.argv = argv
        self._env = dict(env)
        self._changed = changed
        self._ready = ready.encode("utf-8") if ready else None
        self._ready_stderr = ready_stderr.encode("utf-8") if ready_stderr else None
        self._turn_end = turn_end
        self._cwd = cwd
        self._process: subprocess.Popen[bytes] | None = None
        self.tree: ProcessTree | None = None
        self.stdout: _Stream | None = None
        self.stderr: _Stream | None = None
        self.killed = False
        self.clock_seen: bool | None = None
        """Whether a process of the harness mapped the preloaded clock library
        (None: not looked, or no process could be read)."""
        self.clock_missed: str | None = None
        """A process of the harness the preloaded clock did not reach (a
        static or Go program, or one without the library), named."""
        self._clock_judged: set[tuple[int, str]] = set()

    def start(self) -> None:
        """Start the command; raises OSError when it cannot be run."""
        process = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
            cwd=self._cwd,
            start_new_session=True,
        )
        self._process = process
        self.tree = ProcessTree(process.pid)
        assert process.stdout is not None
        assert process.stderr is not None
        # The reader threads own the descriptors from here on.
        out_fd = os.dup(process.stdout.fileno())
        err_fd = os.dup(process.stderr.fileno())
        process.stdout.close()
        process.stderr.close()
        self.stdout = _Stream(out_fd, self._changed, self._ready, self._turn_end)
        self.stderr = _Stream(err_fd, self._changed, self._ready_stderr)
        self.stdout.thread.start()
        self.stderr.thread.start()
        threading.Thread(target=self._reap, name="probe-waiter", daemon=True).start()

    def _reap(self) -> None:
        assert self._process is not None
        self._process.wait()
        with self._changed:
            self._changed.notify_all()

    @property
    def pid(self) -> int:
        """The harness's process id."""
        assert self._process is not None
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once it exited, else None."""
        return None if self._process is None else self._process.poll()

    @property
    def ready_count(self) -> int:
        """How many times the ready text appeared on stdout."""
        return 0 if self.stdout is None else self.stdout.markers

    @property
    def stderr_count(self) -> int:
        """How many times the stderr ready text appeared."""
        return 0 if self.stderr is None else self.stderr.markers

    @property
    def turn_ends(self) -> int:
        """How many stdout lines matched the turn-end pattern."""
        return 0 if self.stdout is None else self.stdout.matched_lines

    @property
    def last_output(self) -> float:
        """When it last printed anything (monotonic seconds)."""
        times = [s.last_output for s in (self.stdout, self.stderr) if s is not None]
        return max(times) if times else time.monotonic()

    def feed(self, line: str) -> bool:
        """Write one line on stdin; False when the harness no longer reads it."""
        assert self._process is not None
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode("utf-8") + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            return False
        return True

    def exit_status_within(self, seconds: float) -> int | None:
        """Its exit status once it exits within `seconds`, else None.

        A harness whose stdin broke is most often exiting: its descriptors
        close before the kernel reports the exit, so this waits for the
        report (bounded) rather than racing it.
        """
        with self._changed:
            self._changed.wait_for(lambda: self.returncode is not None, seconds)
        return self.returncode

    def unread_input(self) -> int:
        """Bytes written on stdin that the harness has not read yet."""
        stdin = None if self._process is None else self._process.stdin
        if stdin is None or stdin.closed:
            return 0
        try:
            raw = fcntl.ioctl(stdin.fileno(), termios.FIONREAD, b"\0\0\0\0")
        except OSError:
            return 0
        count: int = struct.unpack("i", raw)[0]
        return count

    def close_stdin(self) -> None:
        """End of input."""
        stdin = None if self._process is None else self._process.stdin
        if stdin is not None and not stdin.closed:
            with contextlib.suppress(OSError, ValueError):
                stdin.close()

    def scan(self, library: str | None = None) -> None:
        """Note the processes the harness started so far; with a preloaded
        `library`, note whether they mapped it (`clock_seen`) and the first
        one the clock did not reach (`clock_missed`)."""
        if self.tree is None:
            return
        self.tree.scan()
        if library is None or self.clock_missed is not None:
            return
        for pid in self.tree.alive():
            try:  # a pid is judged again once it runs another program
                judged = (pid, os.readlink(f"/proc/{pid}/exe"))
            except OSError:
                continue
            if judged in self._clock_judged:
                continue
            mapped, missed = clock_missed(pid, library)
            if missed is not None:
                self.clock_missed = missed
                return
            if mapped is not None:
                self._clock_judged.add(judged)
                self.clock_seen = mapped or bool(self.clock_seen)

    def end(self) -> None:
        """Kill the harness and everything it started; reap it; close stdin."""
        if self._process is None:
            return
        if self.returncode is None:
            self.killed = True
        if self.tree is not None:
            self.tree.kill()
        with contextlib.suppress(ProcessLookupError):
            self._process.kill()
        self._process.wait()
        self.close_stdin()

    def output(self) -> str:
        """The last of stdout and stderr, for messages."""
        parts = []
        for name, stream in (("stdout", self.stdout), ("stderr", self.stderr)):
            if stream is not None and stream.total:
                head = f"--- {name} (last {TAIL_BYTES} bytes) ---"
                parts.append(f"{head}\n{stream.text()}")
        return "\n".join(parts)
