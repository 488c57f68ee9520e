"""The `reqfold` command line: one entry point, one subcommand per tool.

Each subcommand lives in its own module and exposes `add_arguments(parser)`
and `run(args) -> int`; this module only wires them together, so adding a
tool never touches another tool's code. Imports are lazy so `reqfold check`
does not pay for the fake provider's server stack.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.metadata
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NoReturn, TextIO, cast

from reqfold.conformance.interrupts import say_stderr
from reqfold.conformance.terminal_text import EscapingStream
from reqfold.conformance.usage import USAGE_ERROR_STATUS, usage_error_text

# subcommand name -> (module, one-line help)
_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "check": (
        "reqfold.conformance.check.cli",
        "check session logs offline, with their captured requests",
    ),
    "compare": (
        "reqfold.conformance.report.cli",
        "compare two JSON run reports: what newly fails, passes, or caches less",
    ),
    "demo": ("reqfold.conformance.demo", "play the scripted demo session, log it"),
    "fake": ("reqfold.fakes.cli", "serve the fake caching provider"),
    "probe": (
        "reqfold.conformance.probe.cli",
        "check an unmodified harness as a black box",
    ),
    "run": (
        "reqfold.conformance.run.cli",
        "run the whole suite against an implementation",
    ),
    "vectors": (
        "reqfold.conformance.codec.cli",
        "run the codec vectors against an adapter",
    ),
}


_DOCS: dict[str | None, str] = {
    None: "harness-guide.md",
    "check": "checker.md",
    "compare": "reports.md",
    "demo": "reference-harness.md",
    "fake": "fake-provider.md",
    "probe": "probe.md",
    "run": "harness-guide.md",
    "vectors": "vectors.md",
}
"""The page of the docs each command's help points to."""


def docs_page(command: str | None) -> Path:
    """Where a command's page of the docs is: in the installed package
    (``reqfold/docs``, which the wheel ships), or the checkout's ``docs/``."""
    import reqfold

    return Path(reqfold.__file__).resolve().parent / "docs" / _DOCS[command]


def _epilog(command: str | None) -> str:
    # its own lines, never wrapped (a path must stay whole to be copied)
    return f"docs: {docs_page(command)}\n(also docs/{_DOCS[command]} in the repository)"


class _Parser(argparse.ArgumentParser):
    """A parser whose usage errors are one line and where to read more, not
    the whole usage text (its subcommands' parsers are of this class too)."""

    def error(self, message: str) -> NoReturn:
        """``PROG: error: MESSAGE`` and ``see 'PROG --help'``; exit status 2."""
        self.exit(USAGE_ERROR_STATUS, usage_error_text(self.prog, message))


def build_parser(names: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Build the parser; `names` limits which subcommand modules get imported."""
    parser = _Parser(
        prog="reqfold",
        description="Conformance suite for reconstructable, cache-stable "
        "LLM harness requests.",
        epilog=_epilog(None),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (module_name, help_text) in _SUBCOMMANDS.items():
        if names is not None and name not in names:
            sub.add_parser(name, help=help_text)
            continue
        module = importlib.import_module(module_name)
        command = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=_epilog(name),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(command)
        command.set_defaults(_run=module.run, _parser=command)
    return parser


def _version() -> str:
    """``reqfold VERSION``, from the installed distribution's metadata."""
    try:
        return f"reqfold {importlib.metadata.version('reqfold')}"
    except importlib.metadata.PackageNotFoundError:  # run from a bare checkout
        return "reqfold (version unknown: not installed)"


_VERDICT_COMMANDS = frozenset({"check", "probe", "run", "vectors"})
"""The subcommands whose interruption leaves no verdict."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run `reqfold`; returns the process exit status.

    Run as the program (no `argv`), a Ctrl-C that reaches here is said in one
    line and exits 130, never as a traceback: one in a command with no
    signal handling of its own (``check``, ``compare``, ``demo``), or one
    while a command's modules are still importing. A caller passing `argv`
    (a test, in process) gets the interrupt itself.
    """
    if argv is not None:
        return _main(list(argv))
    args_list = sys.argv[1:]
    try:
        return _main(args_list)
    except KeyboardInterrupt:
        command = _subcommand_word(args_list)
        prog = f"reqfold {command}" if command in _SUBCOMMANDS else "reqfold"
        lost = "; no verdict" if command in _VERDICT_COMMANDS else ""
        say_stderr(f"{prog}: interrupted{lost}")
        return 128 + signal.SIGINT


def _subcommand_word(args_list: list[str]) -> str | None:
    """The first word that is no option: the subcommand, if it names one
    (the top level's options take no value)."""
    return next((a for a in args_list if not a.startswith("-")), None)


def _bare_command(
    parser: argparse.ArgumentParser, args_list: list[str]
) -> argparse.ArgumentParser | None:
    """The parser to say a usage error when `args_list` is empty (``reqfold``)
    or only a command that needs an action (``reqfold fake``); None
    otherwise (an option given is parsed, and said wrong, as it is)."""
    if not args_list:
        return parser
    command = _subparsers(parser).get(args_list[0])
    if command is not None and len(args_list) == 1 and _subparsers(command):
        return command
    return None


def _missing_word(parser: argparse.ArgumentParser) -> str:
    """What `parser` lacks when given no command or action: its choices."""
    what = "a command" if parser.prog == "reqfold" else "an action"
    return f"give {what}: {', '.join(_subparsers(parser))}"


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (none for a parser without)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _main(args_list: list[str]) -> int:
    # Only the subcommand's module is imported, none for ``reqfold
    # --version``, ``--help`` or a word that is no subcommand.
    first = _subcommand_word(args_list)
    parser = build_parser([first] if first in _SUBCOMMANDS else [])
    bare = _bare_command(parser, args_list)
    if bare is not None:  # no command or no action: one line, as any usage error
        bare.error(_missing_word(bare))
    args, unknown = parser.parse_known_args(args_list)
    if unknown:  # said by the subcommand, with its own usage
        args._parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    with escaped_output():
        status: int = args._run(args)
    return status


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """Everything printed meanwhile goes through `EscapingStream`: text an
    implementation controls (an error message, its name, a check id in a
    report) never reaches the terminal as control sequences."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = cast(TextIO, EscapingStream(stdout))
    sys.stderr = cast(TextIO, EscapingStream(stderr))
    try:
        yield
    finally:
        sys.stdout, sys.stderr = stdout, stderr


if __name__ == "__main__":
    raise SystemExit(main())
