"""`conformance.interrupts.signals_deferred`: a stop that waits, and is never lost.

Each test sends itself a real SIGTERM under `run_guarded`, the handler
every ``reqfold`` command runs under.
"""

from __future__ import annotations

import os
import signal

from reqfold.conformance.interrupts import run_guarded, signals_deferred


def test_a_sigterm_inside_a_deferred_block_interrupts_only_once_it_is_done() -> None:
    done: list[str] = []

    def body() -> int:
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGTERM)
            done.append("the rest of the block")
        done.append("after the block")
        return 0

    assert run_guarded("test", body) == 128 + signal.SIGTERM
    assert done == ["the rest of the block"]


def test_a_deferred_sigterm_is_raised_even_when_the_block_raises() -> None:
    def body() -> int:
        try:
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                raise OSError("the block failed")
        except OSError:
            return 0  # a caller that copes with the block's own failure
        return 1

    assert run_guarded("test", body) == 128 + signal.SIGTERM


def test_nested_blocks_interrupt_when_the_outer_one_ends() -> None:
    done: list[str] = []

    def body() -> int:
        with signals_deferred():
            with signals_deferred():
                os.kill(os.getpid(), signal.SIGTERM)
            done.append("the outer block goes on")
        return 0

    assert run_guarded("test", body) == 128 + signal.SIGTERM
    assert done == ["the outer block goes on"]
