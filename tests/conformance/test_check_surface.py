"""The checker's surface (conformance/check/surface.py) against a plain list model.

The surface keeps in-order appends in a compact run and everything else
linked; whatever the mix of appends (in order, out of order, repeated, out
of the run's 64-bit range), shadowed runs and replaces, it must hold and
answer exactly what a list of seqs does.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import msgspec
import pytest
from example_counts import scaled_examples
from hypothesis import given, settings, strategies as st
from msgspec import UNSET

from reqfold.conformance.check.lines import Envelope
from reqfold.conformance.check.surface import ReplaceRefused, Surface
from reqfold.conformance.check.surface_rules import SurfaceRules

HUGE = 1 << 64
SEQS = st.integers(0, 40) | st.sampled_from([-1, HUGE, -HUGE])


class ListSurface:
    """The model: the surface as a plain list of seqs."""

    def __init__(self) -> None:
        self.order: list[int] = []

    def append(self, seq: int) -> None:
        if seq not in self.order:
            self.order.append(seq)

    def shadowed(self, start: int, end: int) -> list[int] | ReplaceRefused:
        for name, node in (("start", start), ("end", end)):
            if node not in self.order:
                message = f"replace {name} seq {node} is not on the surface"
                return ReplaceRefused(message)
        first, last = self.order.index(start), self.order.index(end)
        if first > last:
            return ReplaceRefused(
                f"replace start seq {start} sits after end seq {end} on the surface"
            )
        return self.order[first : last + 1]

    def replace(self, seq: int, shadowed: list[int]) -> None:
        if seq in self.order and seq not in shadowed:
            self.order.remove(seq)
        first = self.order.index(shadowed[0])
        self.order[first : first + len(shadowed)] = [seq]


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), SEQS),
        st.tuples(st.just("append next"), st.integers(1, 3)),
        st.tuples(st.just("replace"), SEQS, SEQS, SEQS),
    ),
    max_size=60,
)


@pytest.mark.spec("SURF-2", "SURF-3")
@settings(max_examples=scaled_examples(400), derandomize=True)
@given(OPS, st.booleans())
def test_the_surface_holds_and_answers_what_a_list_of_seqs_does(
    ops: list[tuple[object, ...]], derive: bool
) -> None:
    surface, model = Surface(derive=derive), ListSurface()
    highest = 0
    for op in ops:
        if op[0] == "append":
            seq = int(op[1])  # type: ignore[call-overload]
            surface.append(seq, {"seq": seq})
            model.append(seq)
        elif op[0] == "append next":  # the common case: the next seqs, in order
            highest += int(op[1])  # type: ignore[call-overload]
            surface.append(highest, {"seq": highest})
            model.append(highest)
        else:
            start, end, seq = (int(x) for x in op[1:])  # type: ignore[call-overload]
            shadowed = surface.shadowed(start, end)
            assert shadowed == model.shadowed(start, end)
            if not isinstance(shadowed, ReplaceRefused):
                surface.replace(seq, shadowed, {"seq": seq})
                model.replace(seq, shadowed)
        assert surface.seqs == model.order
        assert len(surface) == len(model.order)
        if derive:
            assert surface.messages() == [{"seq": seq} for seq in model.order]


SURFACE_OPS = st.sampled_from(
    [
        "append",
        "append",
        msgspec.Raw(b'"append"'),
        UNSET,
        "Append",
        {"op": "replace", "start": 1, "end": 3},
        {"op": "replace", "start": 2, "end": 2},
        {"op": "replace", "start": 4, "end": 1},
        {"op": "replace", "start": 1},
        None,
    ]
)
SURFACE_EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["user/message", "assistant/message", "tool/result"]),
        st.integers(0, 8),
        SURFACE_OPS,
        st.sampled_from([UNSET, [1, 2, 3], [2], [], [1.0, 2, "x"]]),
        st.sampled_from([{}, {"content": []}, {"content": "text"}, None]),
    ),
    max_size=20,
)


@pytest.mark.spec("LOG-4", "SURF-1", "SURF-2", "SURF-4", "DERIVE-2")
@settings(max_examples=scaled_examples(300))
@given(SURFACE_EVENTS, st.booleans())
def test_the_surface_rules_shortcut_finds_and_leaves_what_the_full_rules_do(
    events: list[tuple[Any, ...]], derive: bool
) -> None:
    """`surface_event` passes an ``"append"`` on without a message to derive;
    rule by rule (`_surface_event`) finds the same and leaves the same surface."""
    shortcut, full = SurfaceRules(derive=derive), SurfaceRules(derive=derive)
    for number, (kind, seq, op, sources, data) in enumerate(events, start=2):
        event = Envelope(kind, seq, 0, data, sources, op)  # type: ignore[arg-type]
        got = shortcut.surface_event(event, data, number, seq)
        want = full._surface_event(event, data, number, seq)
        assert list(got) == want
        assert shortcut.surface.seqs == full.surface.seqs
        assert shortcut.surface.history_unknown == full.surface.history_unknown
        if derive:
            assert shortcut.surface.messages() == full.surface.messages()


@pytest.mark.spec("SURF-3")
@pytest.mark.parametrize("derive", [False, True])
def test_a_replace_whose_seq_repeats_a_later_node_of_the_run_keeps_one(
    derive: bool,
) -> None:
    """The replace's seq is already on the surface after what it shadows
    (LOG-2): the old node goes, the new one takes the shadowed place."""
    surface = Surface(derive=derive)
    for seq in range(1, 8):
        surface.append(seq, {"seq": seq})
    shadowed = surface.shadowed(2, 3)
    assert shadowed == [2, 3]
    surface.replace(6, shadowed, {"seq": 6})
    assert surface.seqs == [1, 6, 4, 5, 7]
    assert len(surface) == 5
    if derive:
        assert surface.messages() == [{"seq": seq} for seq in (1, 6, 4, 5, 7)]


@pytest.mark.spec("SURF-2", "SURF-3")
def test_replacing_the_oldest_node_again_and_again_moves_each_node_once() -> None:
    """A log clearing its oldest message one replace at a time: the run's
    array is neither copied nor shortened until half of it has moved to the
    links, then its front is dropped once (white-box: the array itself)."""
    surface, count = Surface(), 4_000
    for seq in range(count):
        surface.append(seq, None)
    array = surface._run
    replaced = count
    for seq in range(count // 2 + 1):
        if seq == count // 2:  # half the array has moved: nothing copied yet
            assert surface._run is array
            assert len(array) == count
        shadowed = surface.shadowed(seq, seq)
        assert shadowed == [seq]
        surface.replace(replaced, shadowed, None)
        replaced += 1
    assert len(surface._run) == count - (count // 2 + 1)  # the front dropped
    assert surface.seqs == [*range(count, replaced), *range(count // 2 + 1, count)]
    assert len(surface) == count


@pytest.mark.spec("SURF-3")
def test_a_surface_that_only_grows_costs_about_eight_bytes_a_node() -> None:
    count = 100_000
    tracemalloc.start()
    try:
        surface = Surface()
        for seq in range(1_000_000, 1_000_000 + 3 * count, 3):
            surface.append(seq, None)
        size, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(surface) == count
    assert size < 16 * count  # linked nodes took about 200 bytes each
