"""A check's JSON form (`Check.dump`, `Check.load`) is a round trip, and
`load` refuses anything else in one line naming the member; a pytest plan
handed to an xdist worker is read the same way."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from example_counts import scaled_examples
from hypothesis import given, settings, strategies as st

from reqfold.conformance.outcomes import Outcome
from reqfold.conformance.pytest_plugin.plan import FORMAT, Options, Plan
from reqfold.conformance.pytest_plugin.state import WORKER_KEY, SuiteState
from reqfold.conformance.verdict import Check

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
texts = st.text(max_size=12)

checks = st.builds(
    Check,
    part=st.sampled_from(["vectors", "properties", "scenarios", "probe", "cache"]),
    id=texts,
    revision=texts,
    rules=st.lists(st.sampled_from(["HDR-4", "PREFIX-5", "TURN-5"]), max_size=3).map(
        tuple
    ),
    outcome=st.sampled_from(list(Outcome)),
    message=texts,
    level=st.sampled_from(["MUST", "SHOULD", ""]),
    duration=st.floats(min_value=0, max_value=1e6, allow_nan=False),
    scenario=st.none() | texts,
    name=texts,
    step=st.none() | st.integers(min_value=0, max_value=50),
    expected=json_values,
    found=json_values,
    first_difference=st.none() | texts,
    detail=st.dictionaries(st.text(max_size=5), json_values, max_size=3),
)


@settings(max_examples=scaled_examples(200))
@given(checks)
def test_a_check_read_back_from_its_json_is_the_same_check(check: Check) -> None:
    assert Check.load(json.loads(json.dumps(check.dump()))) == check


def a_check() -> dict[str, Any]:
    return Check(
        part="scenarios",
        id="plain-turns@session-prefix/send-1/end",
        revision="session-prefix",
        rules=("TURN-1",),
        outcome=Outcome.FAIL,
        duration=1.5,
        scenario="plain-turns",
        name="send-1/end",
        step=1,
    ).dump()


@pytest.mark.parametrize(
    ("member", "value", "said"),
    [
        ("rules", "HDR-4", "check member 'rules': a list of rule IDs, not text"),
        ("rules", [4], "check member 'rules': a list of rule IDs, not all text"),
        ("step", "x", "check member 'step': an integer or null, not text"),
        ("step", True, "check member 'step': an integer or null, not a boolean"),
        ("step", -1, "check member 'step': a step index, not -1"),
        ("scenario", 5, "check member 'scenario': text or null, not the number 5"),
        ("outcome", "great", "check member 'outcome': no outcome 'great'"),
        ("duration", "1", "check member 'duration': a number, not text"),
        ("detail", [], "check member 'detail': an object, not a list"),
    ],
)
def test_a_check_of_the_wrong_shape_is_refused_naming_the_member(
    member: str, value: object, said: str
) -> None:
    data = a_check()
    data[member] = value
    with pytest.raises(ValueError, match=f"^{re.escape(said)}$"):
        Check.load(data)


def test_a_check_missing_a_member_is_refused_naming_it() -> None:
    data = a_check()
    del data["duration"]
    with pytest.raises(ValueError, match=r"^check member 'duration' is missing$"):
        Check.load(data)


@settings(max_examples=scaled_examples(300))
@given(st.dictionaries(st.sampled_from(sorted(a_check())), json_values) | json_values)
def test_any_json_is_a_check_or_one_value_error(data: Any) -> None:
    try:
        loaded = Check.load(data)
    except ValueError as error:
        refused = str(error)
    else:
        assert Check.load(loaded.dump()) == loaded
        return
    assert refused
    assert "\n" not in refused


def test_a_plan_keeps_its_checks_whole_over_json() -> None:
    check = Check.load(a_check())
    plan = Plan(identity={"name": "x"}, vectors=[("r", "c")], checks=[check])
    dumped = json.loads(json.dumps(plan.dump()))
    assert dumped["format"] == FORMAT == "reqfold-pytest-plan/2"
    assert Plan.load(dumped) == plan


class _Config:
    """What `SuiteState.plan` reads of an xdist worker's pytest config."""

    def __init__(self, given: object) -> None:
        self.workerinput = {WORKER_KEY: given}


@pytest.mark.parametrize(
    ("hostile", "said"),
    [
        ({"format": "reqfold-pytest-plan/1"}, "its format is 'reqfold-pytest-plan/1'"),
        ("a plan", "its format is 'a plan'"),
        (
            {
                "format": FORMAT,
                "identity": {},
                "vectors": [],
                "checks": [{**a_check(), "rules": "HDR-4"}],
                "notes": [],
                "error": None,
            },
            "plan check 0: check member 'rules': a list of rule IDs, not text",
        ),
        (
            {"format": FORMAT, "identity": {}, "vectors": [["r"]], "checks": []},
            "plan member 'vectors' is not a list of [revision, case]",
        ),
    ],
)
def test_a_worker_given_a_plan_it_cannot_read_collects_one_line_error(
    hostile: object, said: str
) -> None:
    state = SuiteState(options=Options(impl="x"))
    plan = state.plan(_Config(hostile))  # type: ignore[arg-type]
    assert plan.error is not None
    assert plan.error.startswith("the plan from the xdist controller cannot be read")
    assert plan.error.endswith(said)
    assert "\n" not in plan.error
