"""The control surface: HTTP endpoints under `/_fake/` for tests in any language.

Every endpoint speaks JSON; errors are `{"error": {"message": ...}}` with
a 4xx status. The same operations exist as `FakeProvider` methods.

The endpoints are one table, `ROUTES`: a method, a path pattern (an
upper-case part such as `N` or `NAME` stands for any one path segment), a
handler and a one-line description. A new endpoint is one row plus its
handler; docs/fake-provider.md lists the same routes and a test
(tests/fakes/test_control_routes.py) keeps the two equal. A path or
method no row serves is a 404 naming both.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from reqfold.fakes.capture import dump_captured_request
from reqfold.fakes.errors import InvalidRequest, ScriptError
from reqfold.fakes.http import (
    HttpRequest,
    LazyChunks,
    ResponsePlan,
    json_headers,
    key_digest,
)
from reqfold.fakes.jsontypes import JsonObject, JsonValue, json_object, type_name
from reqfold.fakes.profiles import Profile
from reqfold.fakes.provider import FakeProvider
from reqfold.fakes.provider_json import parse_json_body
from reqfold.fakes.routes import parse_match
from reqfold.fakes.script import actions_from, dump_script_item
from reqfold.fakes.stats import dump_stats
from reqfold.fakes.tokenizer import TOKENIZER_NAME, count_tokens

PREFIX = "/_fake"


class _ControlError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _json(status: int, value: JsonValue) -> ResponsePlan:
    # allow_nan=False: what is served is always JSON (never `Infinity`).
    raw = json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return ResponsePlan(status=status, headers=json_headers(len(raw)), chunks=(raw,))


def dump_profile(profile: Profile) -> JsonObject:
    """The JSON form of a profile."""
    value: JsonObject = dataclasses.asdict(profile)
    value["model_minimums"] = dict(profile.model_minimums)
    value["tokenizer"] = TOKENIZER_NAME
    return value


_TUPLE_FIELDS = {"isolation_fields", "render_order", "models"}


def parse_profile_overrides(value: JsonValue) -> dict[str, Any]:
    """Read `POST /_fake/config` overrides into `Profile` keyword arguments."""
    if not isinstance(value, dict):
        raise _ControlError(
            400, f"config overrides must be an object, got {type_name(value)}"
        )
    names = {field.name for field in dataclasses.fields(Profile)} - {"dialect"}
    unknown = set(value) - names
    if unknown:
        raise _ControlError(
            400, f"unknown config keys {sorted(unknown)}; known: {sorted(names)}"
        )
    overrides: dict[str, Any] = {}
    for key, item in value.items():
        if key in _TUPLE_FIELDS:
            if not isinstance(item, list) or not all(isinstance(x, str) for x in item):
                raise _ControlError(400, f"'{key}' must be an array of strings")
            overrides[key] = tuple(item)
        elif key == "model_minimums":
            if not isinstance(item, dict) or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in item.values()
            ):
                raise _ControlError(
                    400, "'model_minimums' must map model names to integers"
                )
            overrides[key] = tuple(
                (name, int(str(count))) for name, count in item.items()
            )
        elif item is None or isinstance(item, int | float | str | bool):
            overrides[key] = item
        else:
            raise _ControlError(400, f"'{key}' must be a scalar, got {type_name(item)}")
    return overrides


def _body(request: HttpRequest) -> JsonValue:
    """The body as strict JSON: no NaN/Infinity, no number out of double
    range, no unpaired surrogate (nothing that cannot be sent back)."""
    if not request.body.strip():
        return {}
    try:
        return parse_json_body(request.body)
    except InvalidRequest as error:
        raise _ControlError(
            400, error.message.replace("the request body", "the control request body")
        ) from None


def _object(request: HttpRequest) -> JsonObject:
    value = _body(request)
    if not isinstance(value, dict):
        raise _ControlError(400, f"expected a JSON object, got {type_name(value)}")
    return value


def handle_control(provider: FakeProvider, request: HttpRequest) -> ResponsePlan:
    """Answer one control request."""
    try:
        return _dispatch(provider, request)
    except _ControlError as error:
        return _json(error.status, {"error": {"message": error.message}})
    except (ScriptError, ValueError, TypeError, OverflowError) as error:
        return _json(400, {"error": {"message": str(error)}})


Params = dict[str, str]
"""The path segments a route's upper-case parts stood for, by part."""
Handler = Callable[[FakeProvider, HttpRequest, Params], ResponsePlan]


@dataclass(frozen=True, slots=True)
class ControlRoute:
    """One control endpoint: what it answers, and how."""

    method: str
    pattern: str
    """The path under `/_fake`; an upper-case part matches any one segment."""
    handler: Handler
    description: str

    def match(self, method: str, path: str) -> Params | None:
        """The segments the pattern's upper-case parts stood for, or None
        when this route does not serve `method` `path`."""
        if method != self.method:
            return None
        wanted = self.pattern.strip("/").split("/")
        if not any(want.isupper() for want in wanted):
            return {} if path == self.pattern else None
        parts = path.strip("/").split("/")
        if len(parts) != len(wanted):
            return None
        params: Params = {}
        for part, want in zip(parts, wanted, strict=True):
            if want.isupper():
                params[want] = part
            elif part != want:
                return None
        return params


def _health(provider: FakeProvider, request: HttpRequest, _: Params) -> ResponsePlan:
    return _json(200, {"ok": True, "dialect": provider.profile.dialect})


def _get_config(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    return _json(200, dump_profile(provider.profile))


def _post_config(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    overrides = parse_profile_overrides(_body(request))
    return _json(200, dump_profile(provider.configure(**overrides)))


def _get_script(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    routes: list[JsonValue] = [
        {"match": match.dump(), "pending": [dump_script_item(a) for a in queue]}
        for match, queue in provider.routes()
    ]
    shown: JsonObject = {"pending": [dump_script_item(a) for a in provider.pending()]}
    if routes:
        shown["routes"] = routes
    return _json(200, shown)


def _post_script(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    value = _body(request)
    items = value.get("replies") if isinstance(value, dict) else value
    if not isinstance(items, list):
        raise _ControlError(400, 'expected {"replies": [...]} or an array of actions')
    actions = actions_from(items)
    if isinstance(value, dict) and "match" in value:
        try:
            match = parse_match(value["match"], key_digest)
        except ValueError as error:
            raise _ControlError(400, str(error)) from None
        provider.route(match, *actions)
    else:
        provider.push(*actions)
    return _json(200, {"queued": len(actions), "pending": len(provider.script)})


def _delete_script(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    provider.reset(cache=False, capture=False, script=True)
    return _json(200, {"pending": 0})


def _requests(provider: FakeProvider, request: HttpRequest, _: Params) -> ResponsePlan:
    since = _since(request.query)
    return _json(
        200,
        {
            "requests": [
                dump_captured_request(r)
                for r in provider.iter_requests()
                if r.index >= since
            ]
        },
    )


def _requests_jsonl(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    # One chunk per line, each rebuilt and dumped as it is sent: never
    # the whole log in memory (3,000 lines of 100 KB bodies are 380 MB).
    snapshot = provider.capture_snapshot()
    lines = LazyChunks(
        len(snapshot),
        lambda: (
            (json.dumps(dump_captured_request(r), ensure_ascii=False) + "\n").encode()
            for r in snapshot
        ),
    )
    return ResponsePlan(
        status=200,
        headers=(("content-type", "application/x-ndjson"),),
        chunks=lines,
    )


def _one_request(
    provider: FakeProvider, request: HttpRequest, params: Params
) -> ResponsePlan:
    index = params["N"]
    if not index.isdigit():
        raise _ControlError(404, f"no captured request {index!r}")
    record = provider.captured(int(index))
    if record is None:
        raise _ControlError(404, f"no captured request with index {index}")
    return _json(200, dump_captured_request(record))


def _diagnostics(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    return _json(
        200,
        {
            "diagnostics": [
                {"index": r.index, **json_object(r.diagnostic)}
                for r in provider.iter_requests()
                if r.diagnostic is not None
            ]
        },
    )


def _stats(provider: FakeProvider, request: HttpRequest, _: Params) -> ResponsePlan:
    return _json(200, dump_stats(provider.stats()))


def _reset(provider: FakeProvider, request: HttpRequest, _: Params) -> ResponsePlan:
    options = _object(request)
    flags = {"cache": True, "capture": True, "script": True, "clock": False}
    for key, flag in options.items():
        if key not in flags or not isinstance(flag, bool):
            raise _ControlError(
                400, f"reset takes boolean {sorted(flags)}; got {key!r}"
            )
        flags[key] = flag
    provider.reset(**flags)
    return _json(200, {"reset": [key for key, flag in flags.items() if flag]})


def _clock(provider: FakeProvider, request: HttpRequest, _: Params) -> ResponsePlan:
    return _json(200, {"now": provider.clock.now()})


def _advance(provider: FakeProvider, request: HttpRequest, _: Params) -> ResponsePlan:
    seconds = _object(request).get("seconds")
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        raise _ControlError(400, 'expected {"seconds": <number >= 0>}')
    return _json(200, {"now": provider.advance(seconds)})


def _open_gate(
    provider: FakeProvider, request: HttpRequest, params: Params
) -> ResponsePlan:
    name = params["NAME"]
    provider.gate(name).open()
    return _json(200, {"gate": name, "open": True})


def _count_tokens(
    provider: FakeProvider, request: HttpRequest, _: Params
) -> ResponsePlan:
    value = _object(request)
    text = value.get("text")
    if isinstance(text, str):
        return _json(200, {"tokens": count_tokens(text), "tokenizer": TOKENIZER_NAME})
    try:
        tokens = provider.count_prompt_tokens(value.get("body"))
    except InvalidRequest as error:
        raise _ControlError(400, error.message) from None
    return _json(200, {"prompt_tokens": tokens, "tokenizer": TOKENIZER_NAME})


ROUTES: tuple[ControlRoute, ...] = (
    ControlRoute("GET", "/health", _health, "liveness and the dialect spoken"),
    ControlRoute("GET", "/config", _get_config, "the profile in force"),
    ControlRoute("POST", "/config", _post_config, "replace profile fields"),
    ControlRoute("POST", "/script", _post_script, "queue or route actions"),
    ControlRoute("GET", "/script", _get_script, "the queued actions and routes"),
    ControlRoute("DELETE", "/script", _delete_script, "empty the queue"),
    ControlRoute("GET", "/requests", _requests, "the captured requests (?since=N)"),
    ControlRoute("GET", "/requests/N", _one_request, "one captured request"),
    ControlRoute("GET", "/requests.jsonl", _requests_jsonl, "the capture log"),
    ControlRoute("GET", "/diagnostics", _diagnostics, "the divergence diagnostics"),
    ControlRoute("GET", "/stats", _stats, "totals and index counters"),
    ControlRoute("POST", "/reset", _reset, "forget cache, capture, script, clock"),
    ControlRoute("GET", "/clock", _clock, "the fake clock's time"),
    ControlRoute("POST", "/clock/advance", _advance, "move the fake clock on"),
    ControlRoute("POST", "/gates/NAME/open", _open_gate, "release a gate's answers"),
    ControlRoute("POST", "/count-tokens", _count_tokens, "tokens of a text or body"),
)
"""Every control endpoint, in the order docs/fake-provider.md lists them."""


def _dispatch(provider: FakeProvider, request: HttpRequest) -> ResponsePlan:
    path = request.path[len(PREFIX) :].rstrip("/") or "/"
    for route in ROUTES:
        params = route.match(request.method, path)
        if params is not None:
            return route.handler(provider, request, params)
    raise _ControlError(404, f"no control endpoint {request.method} {request.path}")


def _since(query: str) -> int:
    values = parse_qs(query).get("since")
    if not values:
        return 0
    if not values[-1].isdigit():
        raise _ControlError(400, f"'since' must be a request index, got {values[-1]!r}")
    return int(values[-1])
