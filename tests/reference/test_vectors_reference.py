"""The reference passes every test vector, in-process and as a child process.

The reference implements every SHOULD as well as every MUST, so each case
must be a strict pass (member order included), and every rejection must
carry the case's informative kind (and seq) in its error data.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from reqfold.conformance.adapters.connection import StdioConnection
from reqfold.conformance.codec.cases import VectorCase
from reqfold.conformance.codec.judging import REJECTED, Verdict, judge_response
from reqfold.conformance.codec.loading import iter_cases
from reqfold.conformance.json_text.values import encode_json
from reqfold.reference.revisions import Revision
from reqfold.reference.shells.adapter import RpcError, dispatch

RUNS = [
    pytest.param(
        revision, case, marks=pytest.mark.spec(*case.rules), id=f"{revision}/{case.id}"
    )
    for revision, case in iter_cases()
]
READ_TIMEOUT = 30.0


def assert_strict_pass(case: VectorCase, response: dict[str, Any]) -> None:
    judgement = judge_response(case, response)
    assert judgement.verdict is Verdict.PASS, judgement.reason
    expected = case.expected_error
    if expected is not None:
        data = response["error"].get("data", {})
        assert data.get("kind") == expected["kind"], response["error"]
        if "seq" in expected:
            assert data.get("seq") == expected["seq"], response["error"]


def in_process(method: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        return {"result": dispatch(method, params)}
    except RpcError as error:
        body: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.data is not None:
            body["data"] = error.data
        return {"error": body}


@pytest.mark.parametrize(("revision", "case"), RUNS)
def test_the_reference_passes_the_vector_in_process(
    revision: Revision, case: VectorCase
) -> None:
    response = in_process(case.method, case.request_params(revision))
    if case.expects_error:
        assert response.get("error", {}).get("code") == REJECTED, response
    assert_strict_pass(case, response)


def reversed_members(value: Any) -> Any:
    """`value` with the members of every object in reverse order."""
    if isinstance(value, dict):
        return {key: reversed_members(value[key]) for key in reversed(value)}
    if isinstance(value, list):
        return [reversed_members(item) for item in value]
    return value


def test_answers_differing_only_in_member_order_never_fail() -> None:
    """Member order is a SHOULD: reordered answers warn, they never fail."""
    verdicts = set()
    for revision, case in iter_cases():
        response = in_process(case.method, case.request_params(revision))
        if "result" in response:
            response = {"result": reversed_members(response["result"])}
        verdicts.add(judge_response(case, response).verdict)
    assert verdicts == {Verdict.PASS, Verdict.WARN}


# ---------------------------------------------------------------- child process


@pytest.fixture(scope="module")
def adapter() -> Iterator[StdioConnection]:
    """One adapter process for the whole run: initialize, the cases, shutdown."""
    running = StdioConnection(
        [sys.executable, "-m", "reqfold.reference.adapter"], timeout=READ_TIMEOUT
    )
    try:
        init = running.request("initialize", {"protocolVersion": 1})
        result = init.get("result")
        assert isinstance(result, dict), init
        assert set(result["revisions"]) >= {r.value for r in Revision}, result
        assert "codec" in result["capabilities"], result
        yield running
        shutdown = running.request("shutdown", {})
        assert shutdown.get("result", "missing") is None, shutdown
        running.end_input()
        code = running.wait()
    finally:
        running.kill()
    assert code == 0, f"the adapter exited with {code}; stderr:\n{running.stderr_tail}"


@pytest.mark.slow
@pytest.mark.parametrize(("revision", "case"), RUNS)
def test_the_reference_passes_the_vector_through_the_adapter_process(
    adapter: StdioConnection, revision: Revision, case: VectorCase
) -> None:
    response = adapter.request(case.method, case.request_params(revision))
    assert_strict_pass(case, response)


def test_vectors_with_infinite_numbers_travel_as_number_text() -> None:
    """The wire text of a 1e400 vector is still JSON, which the adapter reads."""
    case = next(
        c for _, c in iter_cases() if c.id == "canonical-rejects-infinite-temperature"
    )
    text = encode_json(case.params)
    assert "1e400" in text
    assert json.loads(text)["header"]["config"]["temperature"] == float("inf")


@pytest.mark.parametrize(
    ("line", "why"),
    [
        pytest.param(
            '{"config": {"model": "m", "temperature": NaN}}', "NaN", id="nan-token"
        ),
        pytest.param(
            '{"config": {"model": "m"}, "config": {"model": "n"}}',
            "repeats the key",
            id="repeated-key",
        ),
    ],
)
def test_the_adapter_refuses_json_text_no_vector_can_hold_as_a_parse_error(
    line: str, why: str
) -> None:
    """A vector file is JSON without NaN tokens or repeated keys, so these two
    JSON-1 breaches are shown here, on the adapter's reading of a request."""
    request = (
        '{"jsonrpc": "2.0", "id": 1, "method": "codec/canonical",'
        f' "params": {{"header": {line}}}}}\n'
    )
    process = subprocess.run(
        [sys.executable, "-m", "reqfold.reference.adapter"],
        input=request,
        capture_output=True,
        text=True,
        timeout=READ_TIMEOUT,
        check=False,
    )
    assert process.returncode == 0, process.stderr
    response = json.loads(process.stdout)
    assert response["id"] is None
    assert response["error"]["code"] == -32700
    assert why in response["error"]["message"]
