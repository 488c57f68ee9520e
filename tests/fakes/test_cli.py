"""`reqfold fake serve` as a child process.

Two refusals that come before anything is served (a bad knob, an address
that cannot be listened on) call it in the test's process instead
(`cli_in_process`), which saves a child's start-up; the refused capture
paths show the same exit status and stderr from a real process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile

import httpx
import pytest
from cli_in_process import reqfold_here

from reqfold.fakes import HttpRequest
from reqfold.fakes.cli import capture_path_problem, save_capture

pytestmark = pytest.mark.slow


COMMAND = (sys.executable, "-m", "reqfold.conformance.cli", "fake", "serve")


def spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*COMMAND, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serve_prints_its_url_first_then_serves_until_signalled(stop, tmp_path):
    capture = tmp_path / "capture.jsonl"
    child = spawn(
        "--dialect",
        "deepseek",
        "--block-size",
        "32",
        "--ttl",
        "none",
        "--access-log",
        "--capture-out",
        str(capture),
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        body = {
            "model": "deepseek-chat",
            "messages": [{"role": "user", "content": "hi " * 100}],
        }
        with httpx.Client(
            base_url=url, headers={"authorization": "Bearer sk-cli-secret"}
        ) as client:
            assert client.get("/_fake/config").json()["block_size"] == 32
            assert client.get("/_fake/config").json()["ttl"] is None
            client.post("/chat/completions", json=body)
            usage = client.post("/chat/completions", json=body).json()["usage"]
        assert usage["prompt_cache_hit_tokens"] > 0
        child.send_signal(stop)
        stdout, stderr = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0
    assert stdout == ""
    assert "sk-cli-secret" not in stderr
    lines = capture.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0, 1]
    assert "sk-cli-secret" not in capture.read_text(encoding="utf-8")


CREDENTIAL_HEADERS = {
    "authorization": "Bearer sk-secret-authorization",
    "cookie": "session=sk-secret-cookie",
    "x-goog-api-key": "sk-secret-goog",
    "anthropic-api-key": "sk-secret-anthropic",
    "helicone-auth": "Bearer sk-secret-helicone",
    "x-portkey-virtual-key": "sk-secret-portkey",
    "x-session-token": "sk-secret-token",
    "x-client-secret": "sk-secret-client",
    "x-unheard-of": "sk-secret-unknown",
    "x-stainless-api-key": "sk-secret-stainless",
}
HARMLESS_HEADERS = {
    "user-agent": "field-harness/1.2",
    "anthropic-version": "2023-06-01",
    "x-stainless-lang": "js",
}


def test_no_credential_reaches_a_capture_or_the_access_log(tmp_path):
    capture = tmp_path / "capture.jsonl"
    child = spawn(
        *("--dialect", "deepseek", "--capture-out", str(capture)),
        *("--access-log", "--log-level", "info"),
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        body = {
            "model": "deepseek-chat",
            "messages": [{"role": "user", "content": "hi"}],
        }
        with httpx.Client(base_url=url) as client:
            answer = client.post(
                "/chat/completions?key=sk-secret-query",
                json=body,
                headers={**CREDENTIAL_HEADERS, **HARMLESS_HEADERS},
            )
            assert answer.status_code == 200
            served = client.get("/_fake/requests.jsonl").text
        child.send_signal(signal.SIGTERM)
        logged = "".join(child.communicate(timeout=20))
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert "POST /chat/completions HTTP/1.1" in logged  # the access log, no query
    assert "sk-secret" not in logged
    written = capture.read_text(encoding="utf-8")
    for text in (served, written):
        assert "sk-secret" not in text
        headers = dict(json.loads(text.splitlines()[0])["headers"])
        assert {name: headers[name] for name in CREDENTIAL_HEADERS} == dict.fromkeys(
            CREDENTIAL_HEADERS, "<redacted>"
        )
        assert {name: headers[name] for name in HARMLESS_HEADERS} == HARMLESS_HEADERS


def test_serve_refuses_invalid_knobs_with_a_reason():
    status, _, stderr = reqfold_here("fake", "serve", "--render-order", "system,tools")
    assert status == 2
    assert "render_order" in stderr


def test_serve_serves_the_anthropic_dialect():
    child = spawn("--dialect", "anthropic")
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        with httpx.Client(base_url=url) as client:
            response = client.post(
                "/v1/messages",
                json={
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 10,
                    "messages": [{"role": "user", "content": "hi"}],
                },
            )
        assert response.json()["type"] == "message"
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0


def test_serve_serves_the_responses_dialect():
    child = spawn("--dialect", "openai-responses")
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        with httpx.Client(base_url=url) as client:
            response = client.post(
                "/v1/responses", json={"model": "gpt-5", "input": "hi"}
            )
            health = client.get("/_fake/health").json()
        assert response.json()["object"] == "response"
        assert health["dialect"] == "openai-responses"
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0


@pytest.mark.parametrize("text", ["nan", "-1", "infinity"])
def test_a_seconds_option_refuses_values_that_are_not_finite_non_negative_numbers(
    text, capsys
):
    import argparse

    from reqfold.fakes.cli import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["serve", "--ttl", "30"]).ttl == 30
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", f"--ttl={text}"])
    assert "finite" in capsys.readouterr().err


def test_serve_answers_the_dialects_models_and_those_given_by_model():
    child = spawn("--model", "my-model")
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        user = [{"role": "user", "content": "hi"}]
        with httpx.Client(base_url=url) as client:
            statuses = [
                client.post(
                    "/chat/completions", json={"model": model, "messages": user}
                ).status_code
                for model in ("my-model", "deepseek-chat", "gpt-4o")
            ]
        child.send_signal(signal.SIGTERM)
        child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert statuses == [200, 200, 400]


@pytest.mark.parametrize(
    ("where", "reason"),
    [("missing-dir/x.jsonl", "does not exist"), (".", "is a directory")],
)
def test_a_capture_path_that_cannot_be_written_is_refused_before_serving(
    where, reason, tmp_path
):
    child = spawn("--capture-out", str(tmp_path / where))
    stdout, stderr = child.communicate(timeout=20)
    assert child.returncode == 2
    assert stdout == ""
    assert reason in stderr
    assert "Traceback" not in stderr


def test_a_capture_that_cannot_reach_its_path_at_exit_is_saved_elsewhere(tmp_path):
    folder = tmp_path / "gone"
    folder.mkdir()
    spare = tmp_path / "spare"
    spare.mkdir()
    child = subprocess.Popen(
        [*COMMAND, "--capture-out", str(folder / "x.jsonl")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(spare)},
    )
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        body = {
            "model": "deepseek-chat",
            "messages": [{"role": "user", "content": "a"}],
        }
        with httpx.Client(base_url=url) as client:
            assert client.post("/chat/completions", json=body).status_code == 200
        folder.rmdir()
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 1
    assert "Traceback" not in stderr
    (saved,) = spare.glob("reqfold-capture-*.jsonl")
    assert str(saved) in stderr
    lines = saved.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == [0]


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--ttl", "abc", "must be a finite number >= 0 seconds (or 'none'), got 'abc'"),
        ("--max-age", "x", "must be a finite number >= 0 seconds"),
        ("--block-size", "big", "must be an integer >= 1, got 'big'"),
        ("--capture-max-bytes", "lots", "must be an integer >= 0, got 'lots'"),
        ("--port", "70000", "must be a port in 0..65535, got 70000"),
        ("--port", "-1", "must be >= 0, got -1"),
        ("--host", "", "must not be empty"),
        ("--render-order", " ", "must not be empty"),
        ("--isolation-field", "", "must not be empty"),
    ],
)
def test_a_malformed_option_value_is_explained_in_words(option, value, message, capsys):
    import argparse

    from reqfold.fakes.cli import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", option, value])
    err = capsys.readouterr().err
    assert message in err
    assert "invalid _" not in err


def test_the_log_level_option_lists_its_values(capsys):
    import argparse

    from reqfold.fakes.cli import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--log-level", "loud"])
    assert "'critical', 'error', 'warning', 'info', 'debug'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["serve", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "critical, error, warning, info, debug, trace" in help_text


def test_serve_says_on_exit_when_the_capture_bounds_dropped_requests(tmp_path):
    capture = tmp_path / "capture.jsonl"
    child = spawn("--capture-limit", "1", "--capture-out", str(capture))
    try:
        assert child.stdout is not None
        url = child.stdout.readline().strip()
        body = {
            "model": "deepseek-chat",
            "messages": [{"role": "user", "content": "a"}],
        }
        with httpx.Client(base_url=url) as client:
            for _ in range(3):
                assert client.post("/chat/completions", json=body).status_code == 200
        child.send_signal(signal.SIGTERM)
        _, stderr = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 0
    assert "the 2 before them" in stderr
    lines = capture.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["index"] for line in lines] == [2]


def test_an_address_that_cannot_be_listened_on_exits_2_in_one_line():
    status, stdout, stderr = reqfold_here(
        "fake", "serve", "--host", "no.such.host.invalid", limit=30
    )
    assert status == 2
    assert stdout == ""
    assert "cannot listen on no.such.host.invalid:0" in stderr
    assert "Traceback" not in stderr


def test_a_capture_through_a_link_replaces_the_file_it_names_and_keeps_the_link(
    tmp_path,
):
    (tmp_path / "real.jsonl").write_text("OLD\n")
    link = tmp_path / "capture.jsonl"
    link.symlink_to("real.jsonl")
    assert save_capture([], link)
    assert link.is_symlink()
    assert (tmp_path / "real.jsonl").read_text() == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capture.jsonl", "real.jsonl"]


def test_a_capture_to_a_pipe_is_written_through_and_leaves_the_pipe(tmp_path, deepseek):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, at once
    body = b'{"model": "deepseek-chat", "messages": [{"role": "user", "content": "a"}]}'
    deepseek.handle(HttpRequest(method="POST", path="/chat/completions", body=body))
    try:
        assert save_capture(deepseek.requests, fifo)
        [line] = os.read(reader, 1 << 16).decode().splitlines()
    finally:
        os.close(reader)
    assert fifo.is_fifo()
    assert json.loads(line)["index"] == 0


def test_a_capture_to_a_pipe_no_one_reads_goes_to_the_fallback_file(
    tmp_path, deepseek, monkeypatch, capsys
):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    spare = tmp_path / "spare"
    spare.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spare))
    body = b'{"model": "deepseek-chat", "messages": [{"role": "user", "content": "a"}]}'
    deepseek.handle(HttpRequest(method="POST", path="/chat/completions", body=body))
    assert not save_capture(deepseek.requests, fifo)
    (saved,) = spare.glob("reqfold-capture-*.jsonl")
    assert str(saved) in capsys.readouterr().err
    assert fifo.is_fifo()


def test_a_capture_link_is_judged_by_the_folder_of_the_file_it_names(tmp_path):
    link = tmp_path / "capture.jsonl"
    link.symlink_to(tmp_path / "missing" / "real.jsonl")  # dangling
    problem = capture_path_problem(link)
    assert problem is not None
    assert "does not exist" in problem


def test_a_capture_leaves_a_link_planted_at_a_guessable_temporary_name(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("VICTIM\n")
    (tmp_path / f".capture.jsonl.{os.getpid()}.tmp").symlink_to(victim)
    capture = tmp_path / "capture.jsonl"
    assert save_capture([], capture)
    assert victim.read_text() == "VICTIM\n"
    assert capture.read_text() == ""
    assert not capture.is_symlink()
    opened = tmp_path / "opened"
    opened.write_text("")  # as `open` makes a file, under this umask
    assert capture.stat().st_mode & 0o777 == opened.stat().st_mode & 0o777
