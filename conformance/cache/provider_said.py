"""What a provider's own cache diagnostics answered, in its own words.

Anthropic (`diagnostics.cache_miss_reason`) and the Responses API
(`prompt_cache_diagnostics`) tell a harness that opts in why a request
could not reuse the cache of an earlier one it named
(`reqfold.fakes.native_diagnostics`; the fake keeps the answer under its
diagnostic's `provider`). Shown beside reqfold's own cause, so a reader
sees both judgements of the same request.
"""

from __future__ import annotations

from typing import Any


def provider_said(answered: Any) -> str | None:
    """``model_changed, 232 tokens missed``, ``cache_hit``, ``no cache miss``;
    None when the request named no earlier answer (nothing was compared)."""
    if not isinstance(answered, dict):
        return None
    if "diagnostics" in answered:
        diagnostics = answered["diagnostics"]
        reason = (
            diagnostics.get("cache_miss_reason")
            if isinstance(diagnostics, dict)
            else None
        )
        if not isinstance(reason, dict):
            return "no cache miss"
        said = str(reason.get("type"))
        missed = reason.get("cache_missed_input_tokens")
    else:
        reason = answered.get("prompt_cache_diagnostics")
        if not isinstance(reason, dict):
            return None
        said = str(reason.get("reason", reason.get("type")))
        missed = reason.get("cache_missed_tokens")
    if isinstance(missed, int) and not isinstance(missed, bool):
        said += f", {missed} tokens missed"
    return said
