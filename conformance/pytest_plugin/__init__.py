"""The pytest plugin: the suite as test items inside a harness project's pytest run.

``pytest --reqfold-impl CMD`` collects every codec vector and every check
of the harness scenarios the implementation declares, as items named by
their stable ids (docs/pytest-plugin.md). The plugin is loaded into every
pytest run of an environment that installs reqfold (the ``pytest11``
entry point), including this project's own, so this module is inert: it
declares the options and the marker, imports nothing of the suite, and
only ``--reqfold-impl`` registers the working part
(`reqfold.conformance.pytest_plugin.suite`).
"""

from __future__ import annotations

import pytest

from reqfold.conformance.pytest_plugin.names import MARKER, ReqfoldShouldWarning

_NEEDS_IMPL = (
    "reqfold_revision",
    "reqfold_scenario",
    "reqfold_strict",
    "reqfold_expected_failures",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Declare the ``--reqfold-*`` options (the only cost when inert)."""
    group = parser.getgroup("reqfold", "reqfold conformance suite")
    group.addoption(
        "--reqfold-impl",
        metavar="CMD",
        default=None,
        help="collect the reqfold suite against this adapter command (split like a"
        " shell would; 'reference' runs the reference in process). Without it the"
        " plugin collects nothing.",
    )
    group.addoption(
        "--reqfold-revision",
        metavar="NAME",
        action="append",
        default=None,
        help="judge only this revision (repeatable; default: every revision the"
        " implementation declares)",
    )
    group.addoption(
        "--reqfold-scenario",
        metavar="ID",
        action="append",
        default=None,
        help="play only this scenario (repeatable; default: every scenario)",
    )
    group.addoption(
        "--reqfold-timeout",
        metavar="SECONDS",
        type=float,
        default=10.0,
        help="how long one answer of the adapter may take (default 10)",
    )
    group.addoption(
        "--reqfold-strict",
        action="store_true",
        default=False,
        help="a broken SHOULD rule fails its item instead of warning",
    )
    group.addoption(
        "--reqfold-expected-failures",
        metavar="FILE",
        default=None,
        help="checks known to fail, as for 'reqfold run --expected-failures': each"
        " is an xfail(strict) item, so an entry that starts passing fails as stale",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker; with ``--reqfold-impl``, the working plugin."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*ids, level): a reqfold check and the docs/spec.md rules it shows",
    )
    impl = config.getoption("reqfold_impl")
    if impl is None:
        given = [
            "--" + name.replace("_", "-")
            for name in _NEEDS_IMPL
            if config.getoption(name)
        ]
        if given:
            raise pytest.UsageError(
                f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'}"
                " --reqfold-impl (the adapter to judge)"
            )
        return
    from reqfold.conformance.pytest_plugin.suite import activate

    activate(config, impl)


__all__ = ["MARKER", "ReqfoldShouldWarning"]
