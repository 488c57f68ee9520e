"""The Python loader's public names, where docs/vectors.md first put them.

The loader was one module, ``corpus.py``, until it was split by concern
into `reqfold.conformance.codec.cases`, `loading`, `judging` and `values`
(docs/vectors.md, "The Python loader"). Code written against the old
module keeps working through these re-exports; new code imports from the
four modules.
"""

from __future__ import annotations

from reqfold.conformance.codec.cases import (
    CODEC_RULE_IDS,
    CODEC_RULE_PREFIXES,
    CORE,
    ERROR_KINDS,
    FAMILIES,
    LEVELS,
    PROFILES,
    SCHEMA_PATH,
    SCHEMA_REF,
    STRICT,
    VECTORS_DIR,
    VectorCase,
    VectorError,
    codec_rule_ids,
)
from reqfold.conformance.codec.judging import (
    REJECTED,
    SEQ_NAMING_RULES,
    Judgement,
    Verdict,
    compare_results,
    judge_rejection,
    judge_response,
)
from reqfold.conformance.codec.loading import (
    iter_cases,
    load_cases,
    load_file,
    stray_files,
    vector_files,
)
from reqfold.conformance.json_text.values import (
    DOUBLE_EXACT,
    encode_json,
    load_json,
    values_equal,
)

__all__ = [
    "CODEC_RULE_IDS",
    "CODEC_RULE_PREFIXES",
    "CORE",
    "DOUBLE_EXACT",
    "ERROR_KINDS",
    "FAMILIES",
    "LEVELS",
    "PROFILES",
    "REJECTED",
    "SCHEMA_PATH",
    "SCHEMA_REF",
    "SEQ_NAMING_RULES",
    "STRICT",
    "VECTORS_DIR",
    "Judgement",
    "VectorCase",
    "VectorError",
    "Verdict",
    "codec_rule_ids",
    "compare_results",
    "encode_json",
    "iter_cases",
    "judge_rejection",
    "judge_response",
    "load_cases",
    "load_file",
    "load_json",
    "stray_files",
    "values_equal",
    "vector_files",
]
