"""The control surface is one table of routes, and the docs list that table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reqfold.fakes import FakeProvider
from reqfold.fakes.control import PREFIX, ROUTES, handle_control
from reqfold.fakes.http import HttpRequest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "fake-provider.md"


def _documented_routes() -> list[str]:
    """The `METHOD /_fake/...` cells of the docs' control-surface table."""
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## The control surface (`/_fake/...`)", 1)[1]
    section = section.split("\n## ", 1)[0]
    cells = re.findall(r"^\| `([A-Z]+ /_fake/[^`]*)` \|", section, re.MULTILINE)
    return [re.sub(r"\[.*\]$", "", cell) for cell in cells]


def _answer(method: str, path: str) -> tuple[int, bytes]:
    request = HttpRequest(method=method, path=path, query="", headers=(), body=b"")
    plan = handle_control(FakeProvider("deepseek"), request)
    return plan.status, b"".join(plan.chunks)


def test_the_docs_list_exactly_the_routes_of_the_table_in_its_order() -> None:
    table = [f"{route.method} {PREFIX}{route.pattern}" for route in ROUTES]
    assert _documented_routes() == table


def test_every_route_has_a_one_line_description_and_no_two_routes_collide() -> None:
    assert all(route.description and "\n" not in route.description for route in ROUTES)
    keys = [(route.method, route.pattern) for route in ROUTES]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/_fake/nope"),
        ("PUT", "/_fake/script"),
        ("POST", "/_fake/health"),
        ("GET", "/_fake/gates/a/open"),
        ("POST", "/_fake/gates/a/close"),
        ("GET", "/_fake//health"),
        ("GET", "/_fake"),
    ],
)
def test_an_unknown_route_or_a_wrong_method_is_a_404_naming_both(
    method: str, path: str
) -> None:
    message = f"no control endpoint {method} {path}"
    body = b'{"error": {"message": "' + message.encode() + b'"}}'
    assert _answer(method, path) == (404, body)


def test_a_patterned_route_passes_the_segment_it_matched_to_its_handler() -> None:
    assert _answer("POST", "/_fake/gates/build/open") == (
        200,
        b'{"gate": "build", "open": true}',
    )
    assert _answer("GET", "/_fake/requests/x") == (
        404,
        b'{"error": {"message": "no captured request \'x\'"}}',
    )
