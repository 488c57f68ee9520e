"""The control surface: HTTP endpoints under `/_fake/` for tests in any language.

Every endpoint speaks JSON; errors are `{"error": {"message": ...}}` with
a 4xx status. The same operations exist as `FakeProvider` methods.

=======  ===========================  =============================================
method   path                         effect
=======  ===========================  =============================================
GET      /_fake/health                `{"ok": true, "dialect": ...}`
GET      /_fake/config                the profile in force
POST     /_fake/config                replace profile fields (`{"ttl": 60}`)
GET      /_fake/script                the queued actions, next first, and routes
POST     /_fake/script                queue actions: `{"replies": [...]}`, or
                                      route them: `{"match": {...}, "replies"}`
DELETE   /_fake/script                empty the queue
GET      /_fake/requests              `{"requests": [...]}` (`?since=N`)
GET      /_fake/requests/N            one captured request
GET      /_fake/requests.jsonl        the capture log as JSONL
GET      /_fake/diagnostics           `{"diagnostics": [{"index": N, ...}]}`
GET      /_fake/stats                 totals and index counters
POST     /_fake/reset                 `{"cache", "capture", "script", "clock"}`
GET      /_fake/clock                 `{"now": seconds}`
POST     /_fake/clock/advance         `{"seconds": 360}` -> `{"now": 360.0}`
POST     /_fake/gates/NAME/open       release responses held by gate NAME
POST     /_fake/count-tokens          `{"text": ...}` or `{"body": {...}}`
=======  ===========================  =============================================
"""

from __future__ import annotations

import dataclasses
import json
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
from reqfold.fakes.routes import parse_match
from reqfold.fakes.script import actions_from, dump_script_item
from reqfold.fakes.stats import dump_stats
from reqfold.fakes.strict_json import parse_json_body
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


def _dispatch(provider: FakeProvider, request: HttpRequest) -> ResponsePlan:
    path = request.path[len(PREFIX) :].rstrip("/") or "/"
    method = request.method
    parts = path.strip("/").split("/")
    route = (method, path)
    if route == ("GET", "/health"):
        return _json(200, {"ok": True, "dialect": provider.profile.dialect})
    if route == ("GET", "/config"):
        return _json(200, dump_profile(provider.profile))
    if route == ("POST", "/config"):
        overrides = parse_profile_overrides(_body(request))
        return _json(200, dump_profile(provider.configure(**overrides)))
    if route == ("GET", "/script"):
        routes: list[JsonValue] = [
            {"match": match.dump(), "pending": [dump_script_item(a) for a in queue]}
            for match, queue in provider.routes()
        ]
        shown: JsonObject = {
            "pending": [dump_script_item(a) for a in provider.pending()]
        }
        if routes:
            shown["routes"] = routes
        return _json(200, shown)
    if route == ("POST", "/script"):
        value = _body(request)
        items = value.get("replies") if isinstance(value, dict) else value
        if not isinstance(items, list):
            raise _ControlError(
                400, 'expected {"replies": [...]} or an array of actions'
            )
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
    if route == ("DELETE", "/script"):
        provider.reset(cache=False, capture=False, script=True)
        return _json(200, {"pending": 0})
    if route == ("GET", "/requests"):
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
    if route == ("GET", "/requests.jsonl"):
        # One chunk per line, each rebuilt and dumped as it is sent: never
        # the whole log in memory (3,000 lines of 100 KB bodies are 380 MB).
        snapshot = provider.capture_snapshot()
        lines = LazyChunks(
            len(snapshot),
            lambda: (
                (
                    json.dumps(dump_captured_request(r), ensure_ascii=False) + "\n"
                ).encode()
                for r in snapshot
            ),
        )
        return ResponsePlan(
            status=200,
            headers=(("content-type", "application/x-ndjson"),),
            chunks=lines,
        )
    if method == "GET" and len(parts) == 2 and parts[0] == "requests":
        if not parts[1].isdigit():
            raise _ControlError(404, f"no captured request {parts[1]!r}")
        record = provider.captured(int(parts[1]))
        if record is None:
            raise _ControlError(404, f"no captured request with index {parts[1]}")
        return _json(200, dump_captured_request(record))
    if route == ("GET", "/diagnostics"):
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
    if route == ("GET", "/stats"):
        return _json(200, dump_stats(provider.stats()))
    if route == ("POST", "/reset"):
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
    if route == ("GET", "/clock"):
        return _json(200, {"now": provider.clock.now()})
    if route == ("POST", "/clock/advance"):
        seconds = _object(request).get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise _ControlError(400, 'expected {"seconds": <number >= 0>}')
        return _json(200, {"now": provider.advance(seconds)})
    if (
        method == "POST"
        and len(parts) == 3
        and parts[0] == "gates"
        and parts[2] == "open"
    ):
        provider.gate(parts[1]).open()
        return _json(200, {"gate": parts[1], "open": True})
    if route == ("POST", "/count-tokens"):
        value = _object(request)
        text = value.get("text")
        if isinstance(text, str):
            return _json(
                200, {"tokens": count_tokens(text), "tokenizer": TOKENIZER_NAME}
            )
        try:
            tokens = provider.count_prompt_tokens(value.get("body"))
        except InvalidRequest as error:
            raise _ControlError(400, error.message) from None
        return _json(200, {"prompt_tokens": tokens, "tokenizer": TOKENIZER_NAME})
    raise _ControlError(404, f"no control endpoint {method} {request.path}")


def _since(query: str) -> int:
    values = parse_qs(query).get("since")
    if not values:
        return 0
    if not values[-1].isdigit():
        raise _ControlError(400, f"'since' must be a request index, got {values[-1]!r}")
    return int(values[-1])
