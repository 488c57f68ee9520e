"""The HTML report in a real browser: headless Chromium shows the JSON's numbers.

A real run of a known-bad harness (its silent sliding window breaks the
cache on plain-turns' third request, and prefix-composed-once's checks)
writes the HTML and the JSON report (``reqfold run`` in the test's
process, the harness a child); Chromium (Debian's ``chromium``, which
.ci/run installs) opens the page from disk once, takes a screenshot and
dumps the DOM it rendered, and every number the page shows is compared
with the JSON: the counts per part, each request's prompt, cached and
uncached tokens, where the cache broke, the rule x scenario matrix, the
problems listed. Without Chromium the tests skip, unless ``CI`` is set:
there they fail, so CI cannot pass without looking.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.report.html import SEVERITY

ROOT = Path(__file__).resolve().parents[2]
SLIDING = shlex.join(
    [
        sys.executable,
        str(ROOT / "tests/conformance/bad_harnesses/silent_sliding_window.py"),
    ]
)
VOID = {"meta", "br", "img", "input", "link", "hr", "col", "area", "base", "wbr"}
BROWSER_TIMEOUT = 120


def chromium() -> str:
    """The browser's path; skips (fails under CI) when it is not installed."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and Path("/usr/bin/chromium").exists():
        found = "/usr/bin/chromium"
    if found is None:
        message = "chromium is not installed (apt-get install chromium; .ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium, headless, offline as far as its flags go, on `page`."""
    return subprocess.run(
        [
            chromium(),
            *("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"),
            *("--disable-background-networking", "--disable-component-update"),
            *("--disable-sync", "--no-first-run", f"--user-data-dir={profile}"),
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=BROWSER_TIMEOUT,
        check=False,
    )


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)

    @property
    def content(self) -> str:
        return " ".join("".join(self.text).split())


class Collect(HTMLParser):
    """Every element carrying a ``data-*`` attribute or a class, with its text."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[Element] = []
        self.found: list[Element] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        if tag not in VOID:
            self.stack.append(element)
        if any(k.startswith("data-") or k == "class" for k in element.attrs):
            self.found.append(element)

    def handle_endtag(self, tag: str) -> None:
        while self.stack:
            if self.stack.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        for element in self.stack:
            element.text.append(data)

    def having(self, attribute: str, value: str | None = None) -> list[Element]:
        return [
            e
            for e in self.found
            if attribute in e.attrs and (value is None or e.attrs[attribute] == value)
        ]


@dataclass(frozen=True)
class Page:
    report: dict[str, object]
    html: str
    dom: Collect
    screenshot: Path


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Page:
    chromium()  # skip (or fail) before the run when there is no browser
    folder = tmp_path_factory.mktemp("html")
    html, report = folder / "run.html", folder / "run.json"
    status, out, err = reqfold_here(
        *("run", "--impl", SLIDING),
        *("--only", "scenarios", "--revision", "session-prefix"),
        *("--scenario", "plain-turns", "--scenario", "prefix-composed-once"),
        *("--report-html", str(html), "--report-json", str(report)),
        cwd=ROOT,
    )
    assert status == 1, out + err
    # One browser start renders the page once: its DOM and its screenshot.
    shot = folder / "run.png"
    shown = browse(
        html,
        folder / "profile",
        *("--dump-dom", "--window-size=1280,3000", f"--screenshot={shot}"),
    )
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert "<html" in shown.stdout
    dom = Collect()
    dom.feed(shown.stdout)
    return Page(json.loads(report.read_text()), html.read_text(), dom, shot)


@pytest.mark.slow
def test_the_page_renders_to_a_screenshot(page: Page) -> None:
    data = page.screenshot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000  # a blank page compresses to far less


@pytest.mark.slow
def test_the_page_needs_no_network(page: Page) -> None:
    lowered = page.html.lower()
    for needle in ("<script", "<link", " src=", "url(", "@import"):
        assert needle not in lowered
    hrefs = [e for e in page.dom.found if "href" in e.attrs]
    assert hrefs == []


@pytest.mark.slow
def test_the_verdict_and_counts_shown_are_the_jsons(page: Page) -> None:
    (verdict,) = page.dom.having("data-exit-status")
    assert verdict.content == f"Verdict: {page.report['verdict']['text']}"  # type: ignore[index]
    parts = page.report["parts"]
    assert isinstance(parts, dict)
    for part, counts in [*parts.items(), ("all", page.report["counts"])]:
        (row,) = page.dom.having("data-part", part)
        cells = [e for e in _children(page, row) if "data-count" in e.attrs]
        shown = {cell.attrs["data-count"]: int(cell.content) for cell in cells}
        assert shown.pop("checks") == sum(counts.values())
        assert shown == counts


def _children(page: Page, row: Element) -> list[Element]:
    """The elements found after `row` and before the next row (document order)."""
    found = page.dom.found
    start = next(i for i, e in enumerate(found) if e is row)
    end = next(
        (i for i in range(start + 1, len(found)) if "data-part" in found[i].attrs),
        len(found),
    )
    return found[start + 1 : end]


@pytest.mark.slow
@pytest.mark.spec("CACHE-1")
def test_each_chart_shows_the_jsons_tokens_and_marks_where_the_cache_broke(
    page: Page,
) -> None:
    traces = page.report["scenarios"]
    assert isinstance(traces, list)
    assert len(traces) == 2
    sections = page.dom.having("data-trace")
    assert [s.attrs["data-trace"] for s in sections] == [
        f"{t['scenario']}@{t['revision']}" for t in traces
    ]
    found = page.dom.found
    bounds = [found.index(s) for s in sections] + [len(found)]
    for number, trace in enumerate(traces):
        inside = found[bounds[number] + 1 : bounds[number + 1]]
        rows = [e for e in inside if e.tag == "tr" and "data-request" in e.attrs]
        assert len(rows) == len(trace["requests"])
        for point in trace["requests"]:
            mine = _row_cells(inside, str(point["position"]))
            assert mine == {
                "prompt": point["promptTokens"],
                "cached": point["cachedTokens"],
                "uncached": point["uncachedTokens"],
            }
        totals = {
            e.attrs["data-total"]: e.content for e in inside if "data-total" in e.attrs
        }
        assert int(totals["prompt"]) == trace["promptTokens"]
        assert int(totals["cached"]) == trace["cachedTokens"]
        assert totals["ratio"] == f"{trace['hitRatio']:.1%}"
        bars = [e for e in inside if "data-bar" in e.attrs]
        assert len(bars) == len(trace["requests"])
        for bar, point in zip(bars, trace["requests"], strict=True):
            assert f"{point['cachedTokens']}/{point['promptTokens']}" in bar.content
        marks = [int(e.attrs["data-break"]) for e in inside if "data-break" in e.attrs]
        assert marks == [p["position"] for p in trace["requests"] if p["broke"]]
        whys = [e.content for e in inside if e.attrs.get("data-broke") == "true"]
        assert whys == [_why_cell(p) for p in trace["requests"] if p["broke"]]
    plain = traces[0]
    assert [p["position"] for p in plain["requests"] if p["broke"]] == [2]


def _row_cells(inside: list[Element], position: str) -> dict[str, int]:
    start = next(
        i
        for i, e in enumerate(inside)
        if e.tag == "tr" and e.attrs.get("data-request") == position
    )
    cells: dict[str, int] = {}
    for element in inside[start + 1 :]:
        if element.tag == "tr":
            break
        if "data-field" in element.attrs:
            cells[element.attrs["data-field"]] = int(element.content)
    return cells


@pytest.mark.slow
def test_the_matrix_shows_the_worst_status_of_each_rule_per_scenario(
    page: Page,
) -> None:
    checks = page.report["checks"]
    assert isinstance(checks, list)
    expected: dict[tuple[str, str], str] = {}
    for item in checks:
        for rule in item["rules"]:
            key = (rule, item["scenario"])
            old = expected.get(key, "skip")
            expected[key] = max(old, item["status"], key=SEVERITY.index)
    cells = page.dom.having("data-rule")
    shown = {
        (c.attrs["data-rule"], c.attrs["data-column"]): c.attrs["data-status"]
        for c in cells
    }
    assert shown == expected
    assert shown[("CACHE-1", "plain-turns")] == "fail"
    for cell in cells:
        rule, column = cell.attrs["data-rule"], cell.attrs["data-column"]
        mine = [c for c in checks if rule in c["rules"] and c["scenario"] == column]
        passed = sum(1 for c in mine if c["status"] == "pass")
        if passed:
            assert f"{passed}✓" in cell.content


@pytest.mark.slow
def test_every_problem_is_expanded_with_its_reproduction(page: Page) -> None:
    checks = page.report["checks"]
    assert isinstance(checks, list)
    problems = [c for c in checks if c["status"] in ("fail", "warn", "error", "xpass")]
    assert problems
    shown = page.dom.having("data-check")
    assert [e.attrs["data-check"] for e in shown] == [c["id"] for c in problems]
    assert all("open" in e.attrs for e in shown)
    cache = next(c for c in problems if c["id"].endswith("/cache/request-2"))
    (element,) = [e for e in shown if e.attrs["data-check"] == cache["id"]]
    assert cache["reproduction"]["firstDifference"] in element.content
    assert cache["reproduction"]["command"] in element.content


def _why_cell(point: dict[str, object]) -> str:
    """What a break's cell says: its cause, the tokens lost, then the why."""
    cause = f"{point['cause']}" if point["cause"] else ""
    lost = f" ({point['lostTokens']} tokens lost)" if point["lostTokens"] else ""
    joint = " expected: " if point["expectedBreak"] else " "
    return " ".join(f"{cause}{lost}{joint}{point['why']}".split())
