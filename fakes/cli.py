"""`reqfold fake ...`: run the fake caching provider from the command line.

`reqfold fake serve` binds a loopback socket, prints the base URL (for
example `http://127.0.0.1:54321`) as the first line of stdout, flushed,
then serves until SIGINT or SIGTERM and exits 0. Every profile knob has a
flag; `--capture-out PATH` writes the capture log as JSONL on exit. The
path is checked before serving (exit 2 if it cannot be written); if the
write still fails at exit, the capture goes to a temporary file, stderr
says where, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol, TextIO

from reqfold.fakes.capture import (
    DEFAULT_CAPTURE_BYTES,
    CapturedRequest,
    dump_captured_request,
)
from reqfold.fakes.dialects.registry import DEFAULT_DIALECT, PROFILES
from reqfold.fakes.server import LOOPBACK, base_url, bind_socket, serve
from reqfold.fakes.stats import CaptureStats

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")


def _integer(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be an integer >= {minimum}, got {text!r}"
        ) from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"must be >= {minimum}, got {value}")
    return value


def _positive_int(text: str) -> int:
    return _integer(text, 1)


def _non_negative_int(text: str) -> int:
    return _integer(text, 0)


def _port(text: str) -> int:
    value = _integer(text, 0)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"must be a port in 0..65535, got {value}")
    return value


def _non_empty(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _seconds(text: str) -> float | None:
    if text.lower() in ("none", "forever", "inf"):
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be a finite number >= 0 seconds (or 'none'), got {text!r}"
        )
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the `fake` subcommands to `parser`."""
    sub = parser.add_subparsers(dest="fake_command", metavar="ACTION", required=True)
    serve_parser = sub.add_parser(
        "serve",
        help="serve the fake provider over HTTP",
        description="Serve the fake caching provider. Prints the base URL as the "
        "first line of stdout, then serves until SIGINT/SIGTERM.",
        # the `fake` page's own last lines (where its docs are), as every help
        epilog=parser.epilog,
        formatter_class=parser.formatter_class,
    )
    # `reqfold fake serve --bogus` is told serve's usage, not fake's
    serve_parser.set_defaults(_parser=serve_parser)
    serve_parser.add_argument(
        "--host",
        type=_non_empty,
        default=LOOPBACK,
        help="bind address (default: %(default)s)",
    )
    serve_parser.add_argument(
        "--port", type=_port, default=0, help="port; 0 (default) picks a free one"
    )
    serve_parser.add_argument(
        "--dialect",
        choices=tuple(PROFILES),  # registry order, as probe --dialect lists them
        default=DEFAULT_DIALECT,
        help="wire dialect and cache rules (default: %(default)s)",
    )
    serve_parser.add_argument(
        "--model",
        action="append",
        dest="models",
        metavar="NAME",
        help="also serve model NAME (repeatable; '*' serves any model); by "
        "default the dialect's models are served and others get the "
        "provider's unknown-model error",
    )
    knobs = serve_parser.add_argument_group("cache knobs (default: the dialect's)")
    knobs.add_argument(
        "--block-size", type=_positive_int, help="cache block size in tokens"
    )
    knobs.add_argument(
        "--min-cacheable-tokens",
        type=_non_negative_int,
        help="shorter prompts are never cached",
    )
    knobs.add_argument(
        "--withhold-last-token",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="cap hits at n-1 tokens",
    )
    knobs.add_argument(
        "--ttl",
        type=_seconds,
        default=argparse.SUPPRESS,
        help="entry lifetime after last use, seconds or 'none'",
    )
    knobs.add_argument(
        "--max-age",
        type=_seconds,
        default=argparse.SUPPRESS,
        help="hard lifetime from creation, seconds or 'none'",
    )
    knobs.add_argument(
        "--capacity-tokens", type=_non_negative_int, help="LRU capacity in tokens"
    )
    knobs.add_argument(
        "--isolation-field",
        type=_non_empty,
        action="append",
        dest="isolation_fields",
        metavar="FIELD",
        help="request field that isolates caches (repeatable; replaces the default)",
    )
    knobs.add_argument(
        "--shared-across-keys",
        action="store_true",
        help="let different API keys share cache entries",
    )
    knobs.add_argument(
        "--render-order",
        type=_non_empty,
        help="comma-separated order of tools,system,messages (the default)",
    )
    other = serve_parser.add_argument_group("replies and limits")
    other.add_argument(
        "--default-text", help="reply text when nothing is scripted (default: ok)"
    )
    other.add_argument(
        "--chunk-chars",
        type=_positive_int,
        help="characters per streamed delta (default: 16)",
    )
    other.add_argument(
        "--max-body-bytes",
        type=_non_negative_int,
        help="413 above this size (default: 32 MiB)",
    )
    other.add_argument("--seed", type=int, help="seed mixed into generated ids")
    other.add_argument(
        "--capture-out",
        type=Path,
        help="write the capture log (JSONL) here on exit; checked at start "
        "(exit 2 when it cannot be written)",
    )
    other.add_argument(
        "--capture-limit",
        type=_non_negative_int,
        default=None,
        metavar="N",
        help="keep at most N captured requests (default: no count bound)",
    )
    other.add_argument(
        "--capture-max-bytes",
        type=_non_negative_int,
        default=DEFAULT_CAPTURE_BYTES,
        metavar="N",
        help="keep captured requests in at most N bytes (their bodies as kept: "
        "deltas, compressed); the oldest are dropped and counted "
        "(default: %(default)s)",
    )
    other.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="warning",
        help="uvicorn log level: %(choices)s (default: %(default)s)",
    )
    other.add_argument(
        "--access-log", action="store_true", help="log one line per request"
    )


_KNOBS = (
    "block_size",
    "min_cacheable_tokens",
    "withhold_last_token",
    "capacity_tokens",
    "default_text",
    "chunk_chars",
    "max_body_bytes",
    "seed",
)


def profile_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The `Profile` overrides the flags ask for."""
    overrides: dict[str, Any] = {
        name: getattr(args, name) for name in _KNOBS if getattr(args, name) is not None
    }
    if args.models:
        served = PROFILES[args.dialect].models
        overrides["models"] = (
            *served,
            *(name for name in args.models if name not in served),
        )
    for name in ("ttl", "max_age"):
        if hasattr(args, name):
            overrides[name] = getattr(args, name)
    if args.isolation_fields:
        overrides["isolation_fields"] = tuple(args.isolation_fields)
    if args.shared_across_keys:
        overrides["isolate_api_keys"] = False
    if args.render_order:
        overrides["render_order"] = tuple(
            part.strip() for part in args.render_order.split(",")
        )
    return overrides


def run(args: argparse.Namespace) -> int:
    """Run the chosen `fake` action; returns the exit status."""
    from reqfold.fakes.app import create_app
    from reqfold.fakes.provider import FakeProvider

    if args.capture_out is not None:
        problem = capture_path_problem(args.capture_out)
        if problem is not None:
            print(  # noqa: T201
                f"reqfold fake serve: cannot write the capture to "
                f"{args.capture_out}: {problem}",
                file=sys.stderr,
            )
            return 2

    try:
        provider = FakeProvider(
            args.dialect,
            capture_limit=args.capture_limit,
            capture_max_bytes=args.capture_max_bytes,
            **profile_overrides(args),
        )
    except (TypeError, ValueError) as error:
        print(f"reqfold fake serve: {error}", file=sys.stderr)  # noqa: T201
        return 2
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as error:
        why = error.strerror or error  # never "[Errno 98] ..."
        print(  # noqa: T201
            f"reqfold fake serve: cannot listen on {args.host}:{args.port}: {why}",
            file=sys.stderr,
        )
        return 2  # the address given cannot be used: a bad argument
    print(base_url(sock), flush=True)  # noqa: T201
    try:
        serve(
            create_app(provider),
            sock,
            log_level=args.log_level,
            access_log=args.access_log,
        )
    finally:
        sock.close()
        saved = True
        if args.capture_out is not None:
            saved = save_capture(provider.capture_snapshot(), args.capture_out)
            _warn_dropped(provider.stats().capture)
    return 0 if saved else 1


def _warn_dropped(capture: CaptureStats) -> None:
    if capture.dropped_requests:
        print(  # noqa: T201
            f"reqfold fake serve: the capture holds the last {capture.requests} "
            f"requests; the {capture.dropped_requests} before them "
            f"({capture.dropped_bytes} bytes) were dropped by the capture bounds "
            "(--capture-limit, --capture-max-bytes)",
            file=sys.stderr,
        )


def capture_path_problem(path: Path) -> str | None:
    """Why a capture could not be written to `path`, or `None` if it can
    (through a link, the file it names, where `save_capture` writes)."""
    path = Path(os.path.realpath(path))
    folder = path.parent
    if path.is_dir():
        return "it is a directory"
    if not folder.exists():
        return f"the folder {folder} does not exist"
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"the folder {folder} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return "the file is not writable"
    return None


class Records(Protocol):
    """Captured requests that can be counted and read more than once (a
    list, or the `CaptureLog`, which rebuilds each record as it is read)."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[CapturedRequest]: ...


def save_capture(records: Records, path: Path) -> bool:
    """Write the capture to `path` (whole or not at all); never lose it.

    The JSONL goes to a temporary file beside `path`, renamed over it when
    complete. Should that fail (the folder went away, the disk is full),
    the capture goes to a new file in the system's temporary folder, and
    stderr says where. Returns whether it reached `path`.
    """
    try:
        _write_atomically(records, path)
        return True
    except OSError as error:
        reason = error.strerror or str(error)
    try:
        handle, fallback = tempfile.mkstemp(prefix="reqfold-capture-", suffix=".jsonl")
        os.close(handle)
        _write_atomically(records, Path(fallback))
    except OSError as error:
        print(  # noqa: T201
            f"reqfold fake serve: cannot write the capture to {path} ({reason}) "
            f"nor to a temporary file ({error.strerror or error}); "
            f"{len(records)} captured requests are lost",
            file=sys.stderr,
        )
        return False
    print(  # noqa: T201
        f"reqfold fake serve: cannot write the capture to {path} ({reason}); "
        f"wrote it to {fallback} instead",
        file=sys.stderr,
    )
    return False


def _write_atomically(records: Records, path: Path) -> None:
    """The capture, beside `path` then renamed over it; a link is followed
    (the file it names is replaced, the link stays), and a device or a
    pipe is written through, which a rename would replace."""

    def write(stream: TextIO) -> None:
        for record in records:
            stream.write(
                json.dumps(dump_captured_request(record), ensure_ascii=False) + "\n"
            )

    if path.exists() and not (path.is_file() or path.is_dir()):
        # a device or a pipe: written through; a pipe no one reads is an
        # error (ENXIO), not a wait that never ends
        descriptor = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.set_blocking(descriptor, True)
        with open(descriptor, "w", encoding="utf-8") as stream:
            write(stream)
        return
    real = Path(os.path.realpath(path))
    # a new file of a name no one can guess: a link planted at a predictable
    # name would be written through (reqfold.conformance.written_files does the same;
    # fakes/ may not import it)
    descriptor, name = tempfile.mkstemp(".tmp", f".{real.name}.", real.parent)
    temporary = Path(name)
    try:
        with open(descriptor, "w", encoding="utf-8") as stream:
            write(stream)
        try:  # the mode the file had, else what `open` would give a new one
            mode = real.stat().st_mode & 0o7777
        except FileNotFoundError:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        temporary.chmod(mode)
        os.replace(temporary, real)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
