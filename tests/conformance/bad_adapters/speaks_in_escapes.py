"""Puts terminal control sequences in every string it controls: its name,
version and language, and the message of the internal error (-32603) its
diff answers with. They set a terminal's title and clear its screen
(``ESC ] 0 ; ... BEL``, ``ESC [ 2 J``, the C1 ``CSI``) when printed raw."""

from typing import Any

from _serve import serve_broken

from reqfold.reference.shells import adapter

TITLE, CLEAR, C1_CLEAR = "\x1b]0;pwned\x07", "\x1b[2J", "\x9b2J"
REFERENCE_INITIALIZE = adapter.METHODS["initialize"]


def initialize(params: dict[str, Any]) -> dict[str, Any]:
    identity = REFERENCE_INITIALIZE(params)
    return {
        **identity,
        "name": f"escapes{TITLE}",
        "version": f"1.0{CLEAR}",
        "language": f"python{C1_CLEAR}",
    }


def diff(params: dict[str, Any]) -> dict[str, Any]:
    raise ZeroDivisionError(f"bug in diff{TITLE}{CLEAR}{C1_CLEAR}")


serve_broken({"initialize": initialize, "codec/diff": diff})
