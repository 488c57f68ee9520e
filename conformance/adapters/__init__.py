"""Talking to an implementation under test: a child process or the reference."""
