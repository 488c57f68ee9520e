from __future__ import annotations

import array

from hypothesis import given, strategies as st

from reqfold.fakes.tokenizer import (
    BOUNDARY_TOKEN,
    SegmentEncoder,
    count_tokens,
    split_pieces,
    tokenize,
)


@given(st.text())
def test_pieces_join_back_to_the_text(text):
    assert "".join(split_pieces(text)) == text


@given(st.text())
def test_token_count_matches_the_token_ids(text):
    assert count_tokens(text) == len(tokenize(text))


def test_tokenizer_splits_words_digits_punctuation_and_cjk_as_documented():
    assert split_pieces("The quick brownish fox, 12345!") == [
        "The",
        " quic",
        "k",
        " brow",
        "nish",
        " fox",
        ",",
        " 123",
        "45",
        "!",
    ]
    assert split_pieces("中文ab") == ["中", "文", "ab"]


def test_token_ids_are_stable_across_calls_and_processes():
    # CRC-32 of the UTF-8 piece: fixed values, no table, no randomness.
    assert split_pieces("hello world") == ["hell", "o", " worl", "d"]
    assert tokenize("hello world") == [478544099, 252678980, 3951950374, 2564639436]


def test_segment_encoding_starts_with_the_boundary_token_and_is_memoized():
    encoder = SegmentEncoder()
    digest, packed = encoder.encode("hello world")
    ids = array.array("I")
    ids.frombytes(packed)
    assert ids.tolist() == [BOUNDARY_TOKEN, *tokenize("hello world")]
    assert encoder.encode("hello world") == (digest, packed)


@given(st.lists(st.text(max_size=30), max_size=6), st.text(max_size=30))
def test_appending_a_segment_never_changes_earlier_tokens(segments, appended):
    encoder = SegmentEncoder()
    before = b"".join(encoder.encode(text)[1] for text in segments)
    after = b"".join(encoder.encode(text)[1] for text in [*segments, appended])
    assert after.startswith(before)


def test_a_zero_sized_memo_still_encodes():
    assert SegmentEncoder(max_entries=0).encode("a b") == SegmentEncoder().encode("a b")


def test_a_full_memo_stays_bounded_and_evicting_never_changes_an_encoding():
    # Eviction is OrderedDict.popitem(last=False): constant time, oldest first
    # (a plain dict's first-key lookup degraded quadratically once full).
    encoder = SegmentEncoder(max_entries=3)
    texts = [f"segment {i}" for i in range(10)]
    first = [encoder.encode(text) for text in texts]
    assert len(encoder._memo) == 3
    assert [encoder.encode(text) for text in texts] == first
    assert first == [SegmentEncoder().encode(text) for text in texts]
