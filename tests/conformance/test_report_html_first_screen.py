"""The HTML report leads with what failed (issue 29): in headless Chromium,
in a 1,400 x 900 window, the failing check's id is in the first viewport,
and the page needs no horizontal scrolling; a cache break the log explains
is coloured neutrally, only a failed check red.

A real run of a known-bad harness (its silent sliding window breaks the
cache on plain-turns' third request) over every scenario, so the rule x
scenario matrix is as wide as it gets, writes the page (``reqfold run`` in
the test's process, the harness a child). Chromium renders it twice: the
page itself to a screenshot, and a copy with a measuring script appended
(the report itself has none) whose numbers it writes into the DOM, which
``--dump-dom`` hands back. Without Chromium the browser tests skip, unless
``CI`` is set: there they fail.
"""

from __future__ import annotations

import html as entities
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_in_process import reqfold_here

from reqfold.conformance.report.html import BROKE, EXPLAINED

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SLIDING = shlex.join(
    [
        sys.executable,
        str(ROOT / "tests/conformance/bad_harnesses/silent_sliding_window.py"),
    ]
)
FAILING = "plain-turns@session-prefix/cache/request-2"
WIDTH, HEIGHT = 1400, 900

MEASURE = """
<script>
const first = document.querySelector("[data-failed-check]");
const box = first ? first.getBoundingClientRect() : null;
const ids = [...document.querySelectorAll("a[href^='#']")]
  .filter((a) => !document.getElementById(a.getAttribute("href").slice(1)));
document.body.setAttribute("data-measured", JSON.stringify({
  scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth,
  innerHeight: window.innerHeight,
  firstFailed: first ? first.getAttribute("data-failed-check") : null,
  firstTop: box ? box.top : null,
  firstBottom: box ? box.bottom : null,
  firstText: first ? first.innerText : "",
  deadLinks: ids.length,
}));
</script>
"""


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "chromium is not installed (apt-get install chromium; .ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def browse(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            chromium(),
            *("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"),
            *("--disable-background-networking", "--disable-component-update"),
            *("--disable-sync", "--no-first-run", f"--user-data-dir={profile}"),
            f"--window-size={WIDTH},{HEIGHT}",
            *args,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@dataclass(frozen=True)
class Rendered:
    html: str
    measured: dict[str, object]
    screenshot: Path


@pytest.fixture(scope="module")
def failing(tmp_path_factory: pytest.TempPathFactory) -> Rendered:
    chromium()
    folder = tmp_path_factory.mktemp("first-screen")
    html = folder / "run.html"
    status, out, err = reqfold_here(
        *("run", "--impl", SLIDING, "--only", "scenarios", "--scenario", "plain-turns"),
        *("--report-html", str(html), "--quiet"),
        cwd=ROOT,
    )
    assert status == 1, out[-2000:] + err
    shot = folder / "run.png"
    shown = browse(html, folder / "profile-1", f"--screenshot={shot}")
    assert shown.returncode == 0, shown.stderr[-2000:]
    measuring = folder / "measuring.html"
    text = html.read_text(encoding="utf-8")
    measuring.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    dumped = browse(measuring, folder / "profile-2", "--dump-dom")
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    found = re.search(r'data-measured="([^"]*)"', dumped.stdout)
    assert found, dumped.stdout[-2000:]
    return Rendered(text, json.loads(entities.unescape(found[1])), shot)


def test_the_failing_checks_id_is_in_the_first_viewport(failing: Rendered) -> None:
    measured = failing.measured
    assert measured["innerWidth"] == WIDTH
    assert measured["firstFailed"] is not None
    top, bottom = measured["firstTop"], measured["firstBottom"]
    assert isinstance(top, float | int)
    assert isinstance(bottom, float | int)
    assert top >= 0, measured
    viewport = measured["innerHeight"]  # the window less the browser's own
    assert isinstance(viewport, int)
    assert bottom <= viewport, measured
    assert str(measured["firstFailed"]) in str(measured["firstText"])
    # the failures listed first include the cache check that broke
    listed = re.findall(r'data-failed-check="([^"]+)"', failing.html)
    assert FAILING in listed
    data = failing.screenshot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000  # a blank page compresses to far less


def test_the_page_fits_a_1400_pixel_window_without_horizontal_scrolling(
    failing: Rendered,
) -> None:
    assert failing.measured["scrollWidth"] == WIDTH, failing.measured


def test_what_failed_links_to_the_details_and_each_rule_with_its_text(
    failing: Rendered,
) -> None:
    assert failing.measured["deadLinks"] == 0
    section = failing.html.split('<section class="failed" id="failed">', 1)[1]
    section = section.split("</section>", 1)[0]
    assert (
        '<a href="#rule-CACHE-1"><b>CACHE-1</b></a> MUST: Within an instance' in section
    )
    assert failing.html.index('id="failed"') < failing.html.index('id="counts"')


@pytest.mark.spec("CACHE-1")
def test_a_cache_break_the_log_explains_is_neutral_and_a_failed_one_red(
    tmp_path: Path,
) -> None:
    html, markdown = tmp_path / "run.html", tmp_path / "run.md"
    status, out, err = reqfold_here(
        *("run", "--only", "scenarios", "--revision", "session-prefix"),
        *("--scenario", "system-change-between-turns"),
        *("--scenario", "compaction-keeps-prefix-and-system"),
        *("--report-html", str(html), "--report-md", str(markdown), "--quiet"),
    )
    assert status == 0, out + err
    page = html.read_text(encoding="utf-8")
    explained = re.findall(r'<g data-break="\d+" data-explained="(\w+)">', page)
    assert explained
    assert set(explained) == {"true"}
    charts = page.split('<section class="trace"', 1)[1]
    assert f'stroke="{EXPLAINED}"' in charts
    assert BROKE not in charts  # no red mark in a conformant run's charts
    assert 'class="why explained"' in charts
    assert 'id="failed"' not in page
    summary = markdown.read_text(encoding="utf-8")
    assert "(expected)" in summary
    assert "(FAIL)" not in summary
