"""The JUnit XML report: one testcase per check, rule IDs as properties.

One ``testsuite`` per part (vectors, properties, scenarios) inside one
``testsuites``; each check is a ``testcase`` named by its id (classname
``reqfold.<part>``, or ``reqfold.scenarios.<scenario>``), with one
``rule`` property per rule ID plus its ``revision``, ``level`` and
``status``, the way pytest's ``record_property`` writes them, so CI
dashboards group and filter by rule. A ``fail`` (and a stale ``xpass``) is
a ``failure``, an ``error`` an ``error``, a ``skip`` (and an ``xfail``,
as pytest writes it) a ``skipped`` with its reason; a ``warn`` passes with
the warning in ``system-out``. The failure's text holds its reproduction.
An implementation that did not start is one ``error`` testcase
(``reqfold.startup``), so a dashboard never shows an empty green run.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from reqfold.conformance.report.model import RequestPoint, RunReport, ShownCheck
from reqfold.conformance.terminal_text import printable


def _text(value: str) -> str:
    """`value` with every character XML 1.0 cannot hold, and every other
    control character, shown as its escape (`printable`: ``\\x1b``)."""
    return printable(value)


def failure_text(check: ShownCheck) -> str:
    """The message and, when there is one, the reproduction, as plain text."""
    lines = [check.message] if check.message else []
    if check.reason and check.status in ("xfail", "xpass"):
        lines.append(f"expected failure: {check.reason}")
    repro = check.reproduction
    if repro is not None:
        lines.append(f"reproduce: {repro.command}")
        if repro.first_difference is not None:
            lines.append(f"first difference: {repro.first_difference}")
        lines.append("subject: " + json.dumps(repro.subject, ensure_ascii=False))
        if repro.expected is not None or repro.found is not None:
            expected = json.dumps(repro.expected, ensure_ascii=False)
            lines.append("expected: " + expected)
            lines.append("found: " + json.dumps(repro.found, ensure_ascii=False))
    return "\n".join(lines)


def render_junit(report: RunReport) -> str:
    """The report as JUnit XML text."""
    root = ET.Element("testsuites", name=report.tool)
    if report.startup_error:
        # No check ran: one error says why, so a dashboard cannot show green.
        suite = ET.SubElement(
            root, "testsuite", name="reqfold.startup", tests="1", errors="1"
        )
        case = ET.SubElement(
            suite, "testcase", classname="reqfold.startup", name="initialize"
        )
        element = ET.SubElement(
            case,
            "error",
            message=_text(f"the implementation did not start: {report.startup_error}"),
            type="startup",
        )
        element.text = _text(report.startup_error)
    for part in report.parts:
        checks = [check for check in report.checks if check.part == part]
        counts = report.counts(part)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=f"reqfold.{part}",
            tests=str(len(checks)),
            failures=str(counts["fail"] + counts["xpass"]),
            errors=str(counts["error"]),
            skipped=str(counts["skip"] + counts["xfail"]),
            time=f"{sum(check.duration for check in checks):.3f}",
        )
        properties = ET.SubElement(suite, "properties")
        identity = report.implementation
        for name, value in (
            (
                "implementation",
                f"{identity.get('name', '?')} {identity.get('version', '')}",
            ),
            ("suite.version", str(report.suite.get("version"))),
            ("suite.digest", str(report.suite.get("digest"))),
        ):
            ET.SubElement(properties, "property", name=name, value=_text(value.strip()))
        if part == "scenarios":
            for trace in report.traces:  # the cache per scenario run (docs/cache.md)
                for name, number in (
                    ("breaks", trace.breaks),
                    ("lostTokens", trace.lost_tokens),
                ):
                    ET.SubElement(
                        properties,
                        "property",
                        name=f"cache.{trace.key}.{name}",
                        value=str(number),
                    )
        breaks = {
            point.check: point
            for trace in report.traces
            for point in trace.requests
            if point.check and point.broke
        }
        for check in checks:
            _testcase(suite, check, breaks.get(check.id))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _testcase(
    suite: ET.Element, check: ShownCheck, broke: RequestPoint | None = None
) -> None:
    classname = (
        f"reqfold.scenarios.{check.scenario}"
        if check.scenario
        else f"reqfold.{check.part}"
    )
    case = ET.SubElement(
        suite,
        "testcase",
        classname=classname,
        name=_text(check.id),
        time=f"{check.duration:.3f}",
    )
    properties = ET.SubElement(case, "properties")
    for rule in check.rules:
        ET.SubElement(properties, "property", name="rule", value=rule)
    for name, value in (
        ("revision", check.revision),
        ("level", check.level),
        ("status", check.status),
    ):
        ET.SubElement(properties, "property", name=name, value=value)
    if broke is not None:  # the request this cache check judged broke
        for name, value in (
            ("cache.cause", broke.cause or "unclassified"),
            ("cache.lostTokens", str(broke.lost_tokens)),
        ):
            ET.SubElement(properties, "property", name=name, value=value)
    first_line = _text(check.message.splitlines()[0] if check.message else "")
    if check.status == "fail":
        element = ET.SubElement(case, "failure", message=first_line, type="fail")
        element.text = _text(failure_text(check))
    elif check.status == "xpass":
        element = ET.SubElement(
            case,
            "failure",
            message=_text(f"stale expected failure: it passed ({check.reason})"),
            type="xpass",
        )
        element.text = _text(failure_text(check))
    elif check.status == "error":
        element = ET.SubElement(case, "error", message=first_line, type="error")
        element.text = _text(failure_text(check))
    elif check.status == "skip":
        ET.SubElement(case, "skipped", message=_text(check.reason), type="skip")
    elif check.status == "xfail":
        element = ET.SubElement(
            case,
            "skipped",
            message=_text(f"expected failure: {check.reason}"),
            type="pytest.xfail",
        )
        element.text = _text(failure_text(check))
    elif check.status == "warn":
        out = ET.SubElement(case, "system-out")
        out.text = _text(f"SHOULD warning: {failure_text(check)}")
