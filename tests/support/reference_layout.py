"""Which modules of reference/ are its pure core, read from the folder itself.

The top of `reference/` holds exactly the pure modules (no I/O, no clock);
what does I/O lives in `reference/shells/` (and the asyncio loop in
`reference/loop/`). A *launcher* (``python -m reqfold.reference.adapter``
and its like) may sit at the top too: a module whose only statements are
its docstring and an ``if __name__ == "__main__":`` block, so importing it
imports nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path


def is_launcher(path: Path) -> bool:
    """Only a docstring and an ``if __name__ == "__main__":`` block."""
    body = ast.parse(path.read_text(encoding="utf-8")).body
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
    ):
        body = body[1:]
    return len(body) == 1 and _is_main_guard(body[0])


def _is_main_guard(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
        and len(node.test.comparators) == 1
        and isinstance(node.test.comparators[0], ast.Constant)
        and node.test.comparators[0].value == "__main__"
        and not node.orelse
    )


def top_modules(reference: Path) -> list[Path]:
    """The modules at the top of `reference` (the folder), launchers left out."""
    return [path for path in sorted(reference.glob("*.py")) if not is_launcher(path)]


def launchers(reference: Path) -> list[Path]:
    """The launchers at the top of `reference`."""
    return [path for path in sorted(reference.glob("*.py")) if is_launcher(path)]
