"""What the capture keeps of Codex's own headers (docs/codex.md): their
names, with `<redacted>` for values, as for every header not on the
allow-list; on a real uvicorn server."""

from __future__ import annotations

import httpx
import pytest

from reqfold.fakes import FakeProvider
from reqfold.fakes.server import running_server

pytestmark = pytest.mark.slow

CODEX_HEADERS = {
    "x-codex-turn-metadata": '{"turn_id":"t-1","started_at_ms":1733450000000}',
    "x-codex-window-id": "w-42",
    "x-codex-beta-features": "feature-a",
}


def test_codex_metadata_headers_are_captured_with_their_values_redacted() -> None:
    fake = FakeProvider("openai-responses")
    with running_server(fake) as url:
        response = httpx.post(
            url + "/v1/responses",
            json={"model": "gpt-5", "input": "hi"},
            headers={**CODEX_HEADERS, "authorization": "Bearer sk-secret"},
        )
    assert response.status_code == 200, response.text
    headers = dict(fake.capture[0].headers)
    for name, value in CODEX_HEADERS.items():
        assert headers[name] == "<redacted>"
        assert value not in str(fake.capture[0].headers)
    assert headers["authorization"] == "<redacted>"
    assert headers["content-type"] == "application/json"
