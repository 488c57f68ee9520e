"""Wire dialects: request validation, prompt segments and response rendering.

- `openai_chat`: OpenAI-compatible chat completions, in the `deepseek` and
  `openai` flavours (usage fields and stream usage placement differ).
- `anthropic`: Anthropic messages with `cache_control` breakpoints.
- `responses`, `responses_output`: the OpenAI Responses API (requests and
  stored conversations; answers and events).
- `base`: the `Dialect` interface and what the dialects share;
  `chat_dialect`, `messages_dialect`, `responses_dialect`: the objects
  that speak each wire format (`Dialect`s);
- `registry`: one row per dialect (its profile and what speaks it), the
  only place a dialect is named.
- `common`: deterministic ids, text chunking and output token counts.

Every function here is pure: JSON values in, JSON values (or bytes) out.
"""
