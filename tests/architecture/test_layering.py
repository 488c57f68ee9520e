"""The suite's own layering, stated as data: which part may import which.

A *part* of `conformance` is a sub-package (``run``, ``report``, ...) or a
module at its top (``verdict``, ``outcomes``, ...). `LAYERS` orders them
from the bottom up: a part imports only parts of a lower layer (or itself),
so what several tools share sits below all of them and no arrow runs back
up. `NEVER` says the arrows that have run back up before, in words, so a
failure reads as the rule it breaks. And no part imports another part's
``cli`` (its shell), except where `CLI_HANDOVERS` names why.

Every ``import`` counts, including those under ``TYPE_CHECKING`` and inside
functions; ``from a import b`` names the module ``a.b`` when there is one,
and ``reqfold.`` is looked through (`import_names.without_package`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from import_names import without_package

ROOT = Path(__file__).resolve().parents[2]

LAYERS: tuple[tuple[str, ...], ...] = (
    # shared by every tool, importing none
    (
        "errors",
        "interrupts",
        "json_text",
        "loaded_files",
        "options",
        "outcomes",
        "output",
        "quoting",
        "rules",
        "schema_check",
        "strategies",
        "terminal_text",
        "usage",
        "written_files",
    ),
    ("verdict",),  # the verdict words, statuses and the per-rule table
    ("summary",),  # the lines a judging command prints last
    ("adapters",),  # talking to an implementation
    ("cache",),  # the cache judgement
    ("check", "codec"),  # the offline checker; the codec vectors and properties
    ("harness",),  # scenarios, their driver and checks
    ("snapshots",),
    ("report",),
    ("run", "probe", "pytest_plugin"),  # the tools that judge
    ("cli", "demo"),  # the entry points
)
"""The parts of `conformance`, bottom layer first."""

NEVER: tuple[tuple[str, str, str], ...] = (
    ("report", "run", "the reports format a run's results; run calls them"),
    ("probe", "run", "probe judges with the shared verdict, not run's"),
    ("pytest_plugin", "run", "the plugin judges with the shared verdict"),
    ("cache", "run", "the cache judgement is below every tool that shows it"),
    ("adapters", "codec", "talking to an implementation knows no vectors"),
    ("check", "codec", "the checker shares JSON helpers, not the vector runner"),
    ("verdict", "harness", "the verdict is below every tool"),
)
"""(importer, imported, why): arrows that must not exist."""

CLI_HANDOVERS: Mapping[tuple[str, str], str] = {
    ("check", "cache"): "`reqfold check --requests` alone hands over to the "
    "cache judgement's shell",
}
"""(importer, imported): a shell that hands its command to another's."""


def part_of(name: str, package: str) -> str | None:
    """The part of `package` that module `name` is in, or None outside it
    (``conformance.run.cli`` -> ``run``; ``conformance`` itself -> None)."""
    prefix = package + "."
    return name.removeprefix(prefix).split(".")[0] if name.startswith(prefix) else None


def part_of_file(root: Path, path: Path) -> str:
    """The part a file under `root` (the package's folder) belongs to."""
    first = path.relative_to(root).parts[0]
    return first.removesuffix(".py")


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The modules `path` imports, ``reqfold.`` looked through; ``from a
    import b`` names ``a.b`` when that is one of `modules`, else ``a``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(without_package(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            module = without_package(node.module)
            for alias in node.names:
                child = without_package(f"{node.module}.{alias.name}")
                found.add(child if child in modules else module)
    return found


def module_names(root: Path, package: str) -> set[str]:
    """Every module under `root`, by its dotted name in `package`."""
    names = set()
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        names.add(
            ".".join((package, *parts[: -1 if parts[-1] == "__init__" else None]))
        )
    return names


def arrows(root: Path, package: str) -> set[tuple[str, str, str]]:
    """(importer part, imported part, imported module) for every import
    between two different parts of `package`, whose folder is `root`."""
    found: set[tuple[str, str, str]] = set()
    modules = module_names(root, package)
    for path in sorted(root.rglob("*.py")):
        if path == root / "__init__.py":
            continue
        source = part_of_file(root, path)
        for name in imported_modules(path, modules):
            target = part_of(name, package)
            if target is not None and target != source:
                found.add((source, target, name))
    return found


def layering_problems(
    root: Path,
    package: str,
    layers: Sequence[Iterable[str]],
    never: Iterable[tuple[str, str, str]] = (),
    cli_handovers: Mapping[tuple[str, str], str] | None = None,
) -> list[str]:
    """Every way `package` breaks its stated layering, one sentence each."""
    rank = {part: level for level, parts in enumerate(layers) for part in parts}
    handovers = cli_handovers or {}
    parts = {
        part_of_file(root, path)
        for path in root.rglob("*.py")
        if path != root / "__init__.py"
    }
    problems = [f"{part} has no layer" for part in sorted(parts - set(rank))]
    found = arrows(root, package)
    for source, target, name in sorted(found):
        if source in rank and target in rank and rank[target] >= rank[source]:
            problems.append(f"{source} imports {name}, which is not below it")
        if name.split(".")[-1] == "cli" and (source, target) not in handovers:
            problems.append(f"{source} imports another part's shell, {name}")
    for source, target, why in never:
        if any(s == source and t == target for s, t, _ in found):
            problems.append(f"{source} imports {target}: never ({why})")
    return problems


def test_the_suite_keeps_its_stated_layering() -> None:
    assert (
        layering_problems(
            ROOT / "conformance", "conformance", LAYERS, NEVER, CLI_HANDOVERS
        )
        == []
    )


def test_the_stated_layering_names_only_parts_that_exist() -> None:
    stated = {part for parts in LAYERS for part in parts}
    stated |= {part for rule in NEVER for part in rule[:2]}
    stated |= {part for pair in CLI_HANDOVERS for part in pair}
    actual = {
        part_of_file(ROOT / "conformance", path)
        for path in (ROOT / "conformance").rglob("*.py")
    }
    assert stated - actual == set()


def test_each_named_cli_handover_is_one_the_suite_makes() -> None:
    """An excuse nothing needs any more is stale: without the handovers,
    exactly their imports are found."""
    problems = layering_problems(ROOT / "conformance", "conformance", LAYERS, NEVER)
    assert [p.split(",")[0] for p in problems] == [
        f"{source} imports another part's shell" for source, _ in CLI_HANDOVERS
    ]


def test_the_layering_check_finds_each_kind_of_break(tmp_path: Path) -> None:
    """The check above can fail: in a throwaway package, an arrow back up
    (only for type hints), a forbidden arrow, a shell importing another's
    shell and a part with no layer are each found."""
    package = tmp_path / "pkg"
    (package / "tool").mkdir(parents=True)
    (package / "low").mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.tool import x\n"
    )
    (package / "low" / "__init__.py").write_text("import pkg.base\n")
    (package / "low" / "cli.py").write_text("")
    (package / "tool" / "__init__.py").write_text("")
    (package / "tool" / "cli.py").write_text(
        "def main():\n    from pkg.low import cli\n"
    )
    (package / "stray.py").write_text("from reqfold.pkg import base\n")
    layers = (("base",), ("low",), ("tool",))
    never = (("tool", "low", "tools stand apart"),)

    problems = layering_problems(package, "pkg", layers, never)

    assert problems == [
        "stray has no layer",
        "base imports pkg.tool, which is not below it",
        "tool imports another part's shell, pkg.low.cli",
        "tool imports low: never (tools stand apart)",
    ]
    assert layering_problems(
        package,
        "pkg",
        (("base",), ("stray",), ("low",), ("tool",)),
        cli_handovers={("tool", "low"): "a handover"},
    ) == ["base imports pkg.tool, which is not below it"]
