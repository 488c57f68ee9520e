"""``reqfold probe``: check an unmodified harness as a black box (issue 13).

No adapter: the harness is any command that reads user turns on stdin and
talks to an OpenAI/DeepSeek-style endpoint whose base URL (and API key) it
takes from the environment. The probe starts the fake caching provider on
127.0.0.1, runs the command with a fresh API key per process, feeds the
turns one at a time (waiting for each to be handled), optionally restarts
it with a resume command over the same log, finds the session log it
wrote and judges log plus captured requests with the same checks
``reqfold run`` applies to a scenario (docs/probe.md).

Modules: `turns` (the turn script and command templates), `logs` (finding
the log and watching it grow), `tree` (a process tree, found and killed
through /proc), `harness` (the child process: feeding, reading, ending),
`fake` (the fake provider with a count of requests in flight), `driver`
(one probe session), `judge` (evidence in, checks and the cache timeline
out; pure), `cli` (the shell).
"""
