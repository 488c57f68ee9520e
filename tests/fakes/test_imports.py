"""`fakes` is this project's package and knows nothing of the other two."""

from __future__ import annotations

from pathlib import Path

from import_names import imported_names

from reqfold import fakes

PACKAGE = Path(fakes.__file__).resolve().parent
FORBIDDEN = ("conformance", "reference")


def _imported_modules(path: Path) -> set[str]:
    return imported_names(path)


def test_fakes_is_imported_from_this_repository():
    repository = Path(__file__).resolve().parents[2]
    assert PACKAGE.is_relative_to(repository)


def test_fakes_never_imports_conformance_or_reference():
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(
            name for name in _imported_modules(path) if name.split(".")[0] in FORBIDDEN
        )
        for path in PACKAGE.rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_core_modules_do_no_io_and_read_no_clock():
    pure = [
        "tokenizer.py",
        "cache_index.py",
        "prompt.py",
        "diagnostics.py",
        "script.py",
        "capture.py",
        "provider.py",
        "dialects/openai_chat.py",
        "dialects/anthropic.py",
        "dialects/common.py",
        "control.py",
    ]
    banned = {
        "time",
        "random",
        "socket",
        "asyncio",
        "subprocess",
        "uvicorn",
        "datetime",
    }
    found = {name: sorted(_imported_modules(PACKAGE / name) & banned) for name in pure}
    assert {name: mods for name, mods in found.items() if mods} == {}


def _fakes_graph() -> dict[str, set[str]]:
    """Module -> the `fakes` modules it imports (anywhere in the file, including
    imports inside functions and under `TYPE_CHECKING`)."""
    graph: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[module] = set()
        for name in _imported_modules(path):
            if name.split(".")[0] == "fakes" and name != "fakes":
                graph[module].add(name)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_two_modules_of_fakes_import_each_other_even_lazily():
    assert _cycle(_fakes_graph()) == []


def test_the_core_imports_none_of_its_shells():
    shells = {"fakes.app", "fakes.control", "fakes.transport", "fakes.routing"}
    shells |= {"fakes.server", "fakes.cli"}
    assert _fakes_graph()["fakes.provider"] & shells == set()
