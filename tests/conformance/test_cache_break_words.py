"""A broken cache check says what the fake saw in words, its excerpts as JSON."""

from __future__ import annotations

from reqfold.conformance.harness.stability import _cache_message


def diagnostic(relation: str, closest: int | None, **divergence: object) -> object:
    return {
        "relation": relation,
        "closest_request": closest,
        "divergence": divergence or None,
        "cached_tokens": 0,
        "prompt_tokens": 10,
    }


def test_a_divergence_names_the_request_it_left_and_quotes_both_sides_as_json() -> None:
    said = _cache_message(
        1,
        2,
        diagnostic(
            "diverged",
            1,
            field="system",
            char_offset=3,
            earlier='it\'s "old"',
            current="né",
        ),
        True,
    )
    assert said == (
        "request 2 does not extend the previous request (request 1): the fake"
        " saw it diverge from its request 1, first difference in system at"
        ' character 3: earlier "it\'s \\"old\\"", now "né" (0 of 10 tokens cached)'
    )


def test_a_request_that_extends_nothing_says_so() -> None:
    said = _cache_message(0, 1, diagnostic("first", None), False)
    assert "the fake saw it extend no earlier request" in said
    assert "the previous instance's last (request 0)" in said


def test_a_divergence_from_no_known_request_says_every_earlier_one() -> None:
    said = _cache_message(0, 1, diagnostic("diverged", None), True)
    assert "the fake saw it diverge from every earlier request" in said
