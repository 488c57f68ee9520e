"""What each dialect reads for scripted routes to match by (pure)."""

from __future__ import annotations

from reqfold.fakes.dialects import anthropic, openai_chat, responses
from reqfold.fakes.routes import RequestTexts


def test_an_anthropic_tool_result_message_is_not_the_last_user_text() -> None:
    body = {
        "system": "be brief",
        "messages": [
            {"role": "user", "content": "read a.py"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "read"}],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1"}],
            },
        ],
        "tools": [{"name": "read"}],
    }
    assert anthropic.request_texts(body) == RequestTexts(
        system="be brief", last_user="read a.py", tools=("read",)
    )


def test_responses_instructions_and_developer_items_are_both_system_text() -> None:
    body = {
        "instructions": "base",
        "input": [
            {"role": "developer", "content": "permissions"},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call_output", "call_id": "c", "output": "x"},
        ],
        "tools": [{"type": "web_search"}, {"type": "function", "name": "shell"}],
    }
    assert responses.request_texts(body) == RequestTexts(
        system="base\npermissions", last_user="hi", tools=("shell",)
    )
    assert responses.request_texts({"input": "a plain string"}).last_user == (
        "a plain string"
    )


def test_chat_system_and_developer_messages_are_the_system_text() -> None:
    body = {
        "messages": [
            {"role": "system", "content": "one"},
            {"role": "developer", "content": [{"type": "text", "text": "two"}]},
            {"role": "user", "content": "ask"},
            {"role": "tool", "content": "result", "tool_call_id": "c"},
        ]
    }
    assert openai_chat.request_texts(body) == RequestTexts(
        system="one\ntwo", last_user="ask"
    )
