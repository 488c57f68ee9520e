"""Writing a file the user named so that it is there whole or not changed.

A report is read by CI after the run, often over the previous run's: a
write that fails half-way (a full disk) must not leave a truncated report
in its place. `write_whole` writes beside the file and renames; a
symbolic link is followed, so the file it names is replaced and the link
stays; a device or a pipe is written through, since renaming over it would
replace it. A path under ``/dev/`` or ``/proc/`` (``/dev/stdout``), or the
file this process's stdout or stderr is, is written through too, even when
it is a regular file (``--report-md /dev/stdout >> summary.md``): replacing
it would throw away what was written there before.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import tempfile
from pathlib import Path

_MODE = 0o666
"""What a file made by ``open`` gets before the umask (mkstemp's is 0o600)."""


def default_mode() -> int:
    """The mode ``open`` gives a new file under this process's umask."""
    mask = os.umask(0)
    os.umask(mask)
    return _MODE & ~mask


def write_whole(target: str | os.PathLike[str], data: bytes) -> None:
    """Put `data` at `target` whole, or raise `OSError` and leave it as it was.

    A file in a folder this process may not write to (no temporary file
    can go beside it), but which it may write itself, is written in place.
    """
    where = os.fspath(target)
    standard = _standard_stream_of(where)
    if standard is not None:
        _write_to_descriptor(standard, data)
        return
    if _names_a_stream(where):
        # /dev/fd/3 at a regular file: after what is there, never over it
        descriptor = os.open(where, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK)
        os.set_blocking(descriptor, True)
        with open(descriptor, "wb") as stream:
            stream.write(data)
        return
    if os.path.exists(where) and not (os.path.isfile(where) or os.path.isdir(where)):
        # a device or a pipe: a stream; a pipe no one reads is an error
        # (ENXIO), not a wait that never ends
        held = _held_pipe(where)
        descriptor = (
            held if held is not None else os.open(where, os.O_WRONLY | os.O_NONBLOCK)
        )
        os.set_blocking(descriptor, True)
        with open(descriptor, "wb") as stream:
            stream.write(data)
        return
    real = os.path.realpath(where)
    folder, name = os.path.split(real)
    try:
        # a new file of a name no one can guess: nothing planted there is
        # followed (a link at a predictable name would be written through)
        descriptor, temporary = tempfile.mkstemp(".tmp", f"{name}.", folder)
    except PermissionError:
        if not (os.path.isfile(real) and os.access(real, os.W_OK)):
            raise
        with open(real, "wb") as in_place:
            in_place.write(data)
        return
    try:
        with open(descriptor, "wb") as handle:
            handle.write(data)
        # the mode the file had, else what `open` would have given it
        try:
            mode = os.stat(real).st_mode & 0o7777
        except FileNotFoundError:
            mode = default_mode()
        os.chmod(temporary, mode)
        os.replace(temporary, real)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


NO_READER = "no process reads the pipe"
"""What ENXIO means when a named pipe is opened for writing without blocking."""


def why_not_writable(target: str | os.PathLike[str]) -> str | None:
    """Why `target` cannot be written, found by trying now (before a run
    that would write it at its end), or None when it can.

    Nothing is lost or left: an existing regular file passes when a file
    can be made beside it (`write_whole` replaces it, whatever its own
    mode), else it is opened to append (never truncated); a pipe or device
    is opened without blocking, and a file that did not exist is made and
    removed again. Access is what the system says, so root is refused a
    read-only file of ``/sys`` too.
    """
    where = os.fspath(target)
    flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        os.stat(where)
    except OSError as error:
        if error.errno == errno.ELOOP:  # else O_EXCL would say "File exists"
            return write_error_text(error)
    if _is_replaced_whole(where) and _can_make_a_file_beside(where):
        return None
    try:
        if os.path.exists(where):
            descriptor = os.open(where, flags | os.O_APPEND)
            if not _hold_if_named_pipe(where, descriptor):
                os.close(descriptor)
            return None
        where = os.path.realpath(where)  # a dangling link: the file it names
        descriptor = os.open(where, flags | os.O_CREAT | os.O_EXCL, _MODE)
    except OSError as error:
        return write_error_text(error)
    os.close(descriptor)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(where)
    return None


def _is_replaced_whole(where: str) -> bool:
    """Whether `write_whole` would replace `where`: an existing regular
    file, not a stream it writes through."""
    return (
        os.path.isfile(where)
        and not _names_a_stream(where)
        and _standard_stream_of(where) is None
    )


def _can_make_a_file_beside(where: str) -> bool:
    """Whether a file can be made (and is removed again) in the folder of
    the file `where` names, as `write_whole` makes its temporary one."""
    folder, name = os.path.split(os.path.realpath(where))
    try:
        descriptor, probe = tempfile.mkstemp(".tmp", f"{name}.", folder)
    except OSError:
        return False
    os.close(descriptor)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(probe)
    return True


_HELD_PIPES: dict[tuple[int, int], int] = {}
"""Named pipes opened by `why_not_writable`, by (device, inode): kept open
until `write_whole` writes them, since closing the only writer would end
what their reader reads before the report is in it."""


def _hold_if_named_pipe(where: str, descriptor: int) -> bool:
    """Keep `descriptor` for `write_whole` if `where` is a named pipe."""
    found = os.fstat(descriptor)
    if not stat.S_ISFIFO(found.st_mode) or _names_a_stream(where):
        return False
    if _standard_stream_of(where) is not None:
        return False
    key = (found.st_dev, found.st_ino)
    if key in _HELD_PIPES:
        os.close(_HELD_PIPES[key])
    _HELD_PIPES[key] = descriptor
    return True


def _held_pipe(where: str) -> int | None:
    """The descriptor `why_not_writable` kept for the pipe `where`, if any."""
    try:
        found = os.stat(where)
    except OSError:
        return None
    return _HELD_PIPES.pop((found.st_dev, found.st_ino), None)


def write_error_text(error: OSError) -> str:
    """An error writing a file in words: its strerror, never an errno."""
    if error.errno == errno.ENXIO:
        return NO_READER
    return error.strerror or str(error)


def _names_a_stream(where: str) -> bool:
    """Whether `where`, as given (no link followed), is under /dev/ or /proc/."""
    absolute = os.path.abspath(where)
    return absolute.startswith(("/dev/", "/proc/"))


def _standard_stream_of(where: str) -> int | None:
    """1 or 2 when `where` is the file this process's stdout or stderr is
    (``/dev/stdout``, or the file ``>> F`` redirected it to), else None."""
    try:
        named = os.stat(where)
    except OSError:
        return None
    for descriptor in (1, 2):
        try:
            opened = os.fstat(descriptor)
        except OSError:
            continue
        if (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino):
            return descriptor
    return None


def _write_to_descriptor(descriptor: int, data: bytes) -> None:
    """Write `data` whole to stdout or stderr, after what Python buffered
    for it, at the offset the stream has (so ``>>`` appends)."""
    stream = sys.stdout if descriptor == 1 else sys.stderr
    if stream is not None:
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]


def fresh_folder(folder: Path) -> Path:
    """Where a run keeps its evidence under `folder` (``--keep``), never over
    a file it did not make: `folder` itself when it is empty or new, else
    its first free sub-folder ``run-1``, ``run-2``, ... (made here, so no
    other run can take it). Raises `OSError` when none can be made."""
    folder.mkdir(parents=True, exist_ok=True)
    if not any(folder.iterdir()):
        return folder
    number = 1
    while True:
        chosen = folder / f"run-{number}"
        try:
            chosen.mkdir()
        except FileExistsError:
            number += 1
            continue
        return chosen
