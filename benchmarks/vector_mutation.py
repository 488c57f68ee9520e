"""How many plausible codec bugs the vectors alone catch: mutation testing.

Usage::

    python benchmarks/vector_mutation.py [--module reference/header.py ...]
        [--timeout 2] [--limit N] [--json report.json]

For each module (default: ``reference/header.py``, ``reference/writer.py``,
``reference/json_values.py``), every mutant of a small, fixed operator set
is written into a temporary copy of the ``reference`` package, and the
reference's stdio adapter is run from that copy through ``reqfold
vectors``, exactly as a foreign implementation is judged: the vectors are
the only test. The suite itself (judge, loader) runs on the unmutated code.

Operators (one change per mutant, in function bodies only):

* a comparison flipped: ``==``/``!=``, ``<``/``<=``, ``>``/``>=``,
  ``in``/``not in``, ``is``/``is not``;
* ``and``/``or`` swapped; a ``not`` dropped;
* ``+``/``-`` swapped; an integer constant ``n`` made ``n + 1``; ``True``
  and ``False`` swapped;
* a ``raise`` statement replaced by ``pass`` (a check removed).

A mutant is **killed** when some vector fails, errors or warns on it
(``strict``: member order counts), **killed by core** when a ``core`` case
does, and **survives** otherwise. Every survivor is printed with its
line and change; docs/vectors.md publishes the score and says, for each
survivor, why it is equivalent or which vector now kills it.

With ``--search N``, each survivor is also put through the differential
properties (``reqfold run --only properties --examples N``): a hypothesis
search, through the protocol, for inputs a conforming writer produces on
which the mutant and the reference disagree. A disagreement it finds is
printed as a shrunk vector, ready to commit.

Deterministic: mutants are enumerated in source order; the run takes a few
minutes (one adapter process per mutant).
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODULES = (
    "reference/header.py",
    "reference/writer.py",
    "reference/json_values.py",
)

COMPARE_SWAPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


@dataclass(frozen=True, slots=True)
class Mutant:
    """One change: the `index`-th mutable node of a module, and what it becomes."""

    module: str
    index: int
    line: int
    change: str


def _in_function(tree: ast.Module) -> Iterator[ast.AST]:
    """Every node inside a function body, docstrings left out, in source order."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            body = node.body
            first = body[0] if body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                body = body[1:]
            for statement in body:
                yield from ast.walk(statement)


def _changes(node: ast.AST) -> list[str]:
    """What `node` can be mutated into, as words (the order is the index)."""
    if isinstance(node, ast.Compare) and type(node.ops[0]) in COMPARE_SWAPS:
        name = type(node.ops[0]).__name__
        return [f"{name} -> {COMPARE_SWAPS[type(node.ops[0])].__name__}"]
    if isinstance(node, ast.BoolOp):
        return ["and -> or" if isinstance(node.op, ast.And) else "or -> and"]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ["not dropped"]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        return ["+ -> -" if isinstance(node.op, ast.Add) else "- -> +"]
    if isinstance(node, ast.Constant) and isinstance(node.value, bool):
        return [f"{node.value} -> {not node.value}"]
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return [f"{node.value} -> {node.value + 1}"]
    if isinstance(node, ast.Raise):
        return ["raise -> pass"]
    return []


def mutants(module: str) -> list[Mutant]:
    """Every mutant of `module`, in source order."""
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    found: list[Mutant] = []
    for index, node in enumerate(_in_function(tree)):
        for change in _changes(node):
            line = getattr(node, "lineno", 0)
            found.append(Mutant(module, index, line, change))
    return found


class _Apply(ast.NodeTransformer):
    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit(self, node: ast.AST) -> ast.AST:
        if node is not self.target:
            return super().visit(node)
        if isinstance(node, ast.Compare):
            node.ops[0] = COMPARE_SWAPS[type(node.ops[0])]()
        elif isinstance(node, ast.BoolOp):
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp):
            return node.operand
        elif isinstance(node, ast.BinOp):
            node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            node.value = not node.value
        elif isinstance(node, ast.Constant):
            node.value = node.value + 1
        elif isinstance(node, ast.Raise):
            return ast.Pass()
        return node


def mutated_source(mutant: Mutant) -> str:
    """The module's source with `mutant` applied (unparsed: comments dropped)."""
    tree = ast.parse((ROOT / mutant.module).read_text(encoding="utf-8"))
    target = list(_in_function(tree))[mutant.index]
    tree = _Apply(target).visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the vectors made of one mutant."""

    mutant: Mutant
    killed: bool
    killed_by_core: bool
    first: str
    """The id of the first case that caught it ("" for a survivor)."""


def judge(mutant: Mutant | None, workdir: Path, timeout: float) -> Outcome | None:
    """Run the vectors against the reference with `mutant` applied (None: as is)."""
    copy = workdir / "reference"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(ROOT / "reference", copy)
    if mutant is not None:
        (workdir / mutant.module).write_text(mutated_source(mutant), encoding="utf-8")
    # -P: no current directory on sys.path, so the copy is what is imported.
    impl = f"env PYTHONPATH={workdir} {sys.executable} -P -m reqfold.reference.adapter"
    command = [
        sys.executable,
        "-m",
        "reqfold.conformance.cli",
        "vectors",
        "--impl",
        impl,
    ]
    process = subprocess.run(
        [*command, "--format", "json", "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    try:
        report = json.loads(process.stdout)
    except json.JSONDecodeError:
        report = {"results": [], "startupError": process.stderr[-300:]}
    caught = [r for r in report["results"] if r["outcome"] in ("fail", "error", "warn")]
    if mutant is None:
        return None if not caught and not report["startupError"] else _broken(report)
    first = caught[0]["id"] if caught else ""
    killed = bool(caught) or report["startupError"] is not None
    by_core = any(r["profile"] == "core" for r in caught) or bool(
        report["startupError"]
    )
    return Outcome(mutant, killed, by_core, first or "(did not start)" * killed)


def search(mutant: Mutant, workdir: Path, examples: int, timeout: float) -> str:
    """Run the differential properties against `mutant`: "" when they agree
    with the reference, else their report (with the shrunk counterexample)."""
    copy = workdir / "reference"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(ROOT / "reference", copy)
    (workdir / mutant.module).write_text(mutated_source(mutant), encoding="utf-8")
    impl = f"env PYTHONPATH={workdir} {sys.executable} -P -m reqfold.reference.adapter"
    command = [sys.executable, "-m", "reqfold.conformance.cli", "run", "--impl", impl]
    options = ["--only", "properties", "--examples", str(examples)]
    process = subprocess.run(
        [*command, *options, "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    return "" if process.returncode == 0 else process.stdout + process.stderr


def _broken(report: dict[str, object]) -> Outcome:
    raise SystemExit(f"the unmutated reference does not pass the vectors: {report}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--module", action="append", help="a module to mutate")
    parser.add_argument("--timeout", type=float, default=2.0)
    parser.add_argument("--limit", type=int, default=None, help="first N mutants")
    parser.add_argument("--json", type=Path, help="write every outcome here")
    parser.add_argument(
        "--search",
        type=int,
        default=0,
        metavar="N",
        help="put each survivor through the differential properties, N examples",
    )
    args = parser.parse_args()
    modules = args.module or list(DEFAULT_MODULES)
    every = [m for module in modules for m in mutants(module)][: args.limit]
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory(prefix="reqfold-mutants-") as tmp:
        workdir = Path(tmp)
        judge(None, workdir, args.timeout)  # the baseline must pass
        for number, mutant in enumerate(every, 1):
            outcome = judge(mutant, workdir, args.timeout)
            assert outcome is not None
            outcomes.append(outcome)
            mark = "killed" if outcome.killed else "SURVIVED"
            print(
                f"[{number}/{len(every)}] {mark:<8} {mutant.module}:{mutant.line}"
                f" {mutant.change}  {outcome.first}",
                flush=True,
            )
    for module in modules:
        mine = [o for o in outcomes if o.mutant.module == module]
        killed = sum(o.killed for o in mine)
        core = sum(o.killed_by_core for o in mine)
        print(f"{module}: {killed}/{len(mine)} killed ({core} by core cases)")
    killed = sum(o.killed for o in outcomes)
    print(f"total: {killed}/{len(outcomes)} killed")
    print("survivors:")
    found: list[tuple[Mutant, str]] = []
    with tempfile.TemporaryDirectory(prefix="reqfold-search-") as tmp:
        for outcome in outcomes:
            if outcome.killed:
                continue
            m = outcome.mutant
            verdict = ""
            if args.search:
                report = search(m, Path(tmp), args.search, args.timeout)
                verdict = "  properties DISAGREE" if report else "  properties agree"
                if report:
                    found.append((m, report))
            print(f"  {m.module}:{m.line} {m.change}{verdict}", flush=True)
    for m, report in found:
        print(f"\n== {m.module}:{m.line} {m.change}\n{report}")
    if args.json is not None:
        rows = [
            {
                "module": o.mutant.module,
                "line": o.mutant.line,
                "change": o.mutant.change,
                "killed": o.killed,
                "killedByCore": o.killed_by_core,
                "first": o.first,
            }
            for o in outcomes
        ]
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
