"""Keeps empty system and tool fields in the canonical form instead of
dropping them, so "" and absent are two states (breaks HDR-4)."""

from typing import Any

from _serve import serve_broken

from reqfold.reference import header
from reqfold.reference.shells import adapter


def canonical(params: dict[str, Any]) -> dict[str, Any]:
    rev = adapter._revision(params)
    result = header.canonical_header(params["header"], rev)
    for field in rev.header_fields[1:]:
        if field in params["header"] and field not in result:
            result[field] = params["header"][field]
    return {"header": result}


serve_broken({"codec/canonical": canonical})
