"""The whole HTTP surface of the fake: provider endpoints plus `/_fake/`.

The core (`FakeProvider.handle`) answers provider requests only; the
control surface (`reqfold.fakes.control`) drives a provider from outside. This
module puts the two side by side for the shells (the ASGI app, the httpx
transport, the respx route), so the arrows point one way: shells ->
routing -> control -> core, and the core imports none of them.
"""

from __future__ import annotations

from reqfold.fakes.control import handle_control
from reqfold.fakes.http import HttpRequest, ResponsePlan
from reqfold.fakes.provider import FakeProvider

CONTROL_PREFIX = "/_fake/"


def is_control_path(path: str) -> bool:
    """Whether `path` belongs to the control surface."""
    return path.startswith(CONTROL_PREFIX) or path == CONTROL_PREFIX[:-1]


def serve_request(provider: FakeProvider, request: HttpRequest) -> ResponsePlan:
    """Answer one HTTP request: `/_fake/...` by the control surface, the rest
    by the provider core."""
    if is_control_path(request.path):
        return handle_control(provider, request)
    return provider.handle(request)
