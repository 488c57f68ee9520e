"""Helpers shared by the dialects: deterministic ids, chunking, counts, and
the first check of every request body (`request_object`).

Ids look like the real providers' (UUIDs, `chatcmpl-...`, `call_...`,
`msg_...`, `toolu_...`) but are derived from the profile seed and the
request index with BLAKE2b, so the same run always produces the same ids.
`created` timestamps are `EPOCH` plus the logical clock.
"""

from __future__ import annotations

import hashlib
import uuid

from reqfold.fakes.errors import InvalidRequest
from reqfold.fakes.jsontypes import JsonObject, JsonValue, type_name
from reqfold.fakes.script import Reply
from reqfold.fakes.tokenizer import count_tokens

EPOCH = 1_767_225_600  # 2026-01-01T00:00:00Z


def derive_hex(seed: int, index: int, label: str, length: int = 24) -> str:
    """A hex string fixed by (seed, request index, label)."""
    material = f"{seed}:{index}:{label}".encode()
    return hashlib.blake2b(material, digest_size=32).hexdigest()[:length]


def derive_uuid(seed: int, index: int, label: str) -> str:
    """A version-4-shaped UUID fixed by (seed, request index, label)."""
    material = f"{seed}:{index}:{label}".encode()
    raw = bytearray(hashlib.blake2b(material, digest_size=16).digest())
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return str(uuid.UUID(bytes=bytes(raw)))


def split_text(text: str, size: int) -> list[str]:
    """Cut `text` into pieces of at most `size` characters (none if empty)."""
    return [text[start : start + size] for start in range(0, len(text), size)]


def output_tokens(reply: Reply) -> tuple[int, int]:
    """Return (completion tokens, reasoning tokens) of a reply.

    Completion tokens count the text, the reasoning and each tool call's
    name and arguments; a scripted `completion_tokens` overrides the total.
    """
    reasoning = count_tokens(reply.reasoning) if reply.reasoning else 0
    total = reasoning + (count_tokens(reply.text) if reply.text else 0)
    for call in reply.tool_calls:
        total += count_tokens(call.name) + count_tokens(call.arguments)
    if reply.completion_tokens is not None:
        total = reply.completion_tokens
    return total, reasoning


def request_object(value: JsonValue) -> JsonObject:
    """The parsed request body, which every dialect requires to be an object.

    Raises:
        InvalidRequest: the body is some other JSON value.
    """
    if not isinstance(value, dict):
        raise InvalidRequest(
            f"the request body must be a JSON object, got {type_name(value)}"
        )
    return value
