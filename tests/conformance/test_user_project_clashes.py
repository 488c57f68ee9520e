"""reqfold inside a user's project that has packages of its own named
``reference``, ``fakes`` and ``conformance`` (issue 29's two clashes).

Each test makes such a project in a temporary folder (no ``reqfold`` in
it), puts it first on the import path the way its own tests would have it,
and runs reqfold from there as a user does: the installed ``reqfold``
console script for ``reqfold run`` and ``reqfold probe``, and ``python -m
pytest`` (which puts the folder itself on the path) for the pytest plugin,
loaded through its installed entry point. Before the one import package,
``reqfold run`` found no ``reference.harness_adapter``, the plugin imported
the project's ``fakes``, and any pytest session in a project with its own
``conformance`` crashed at start-up.
"""

from __future__ import annotations

import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

PYTHON = shlex.quote(sys.executable)

OWN_PACKAGES = {
    "reference/__init__.py": "THE_PROJECTS_OWN = 'reference'\n",
    "reference/harness_adapter.py": "raise SystemExit('the project reference ran')\n",
    "fakes/__init__.py": "class FakeModel:\n    name = 'the project fakes'\n",
    "conformance/__init__.py": "THE_PROJECTS_OWN = 'conformance'\n",
    "conformance/cli.py": "raise SystemExit('the project conformance ran')\n",
}
"""A harness project's own packages, each a name reqfold once installed."""

OWN_TEST = """
import conformance
import reference
from fakes import FakeModel


def test_the_projects_own_packages_are_its_own():
    assert FakeModel.name == "the project fakes"
    assert conformance.THE_PROJECTS_OWN == "conformance"
    assert reference.THE_PROJECTS_OWN == "reference"
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project folder holding its own clashing packages and a test."""
    folder = tmp_path / "harness-project"
    for name, text in OWN_PACKAGES.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    (folder / "test_own.py").write_text(OWN_TEST, encoding="utf-8")
    assert not (folder / "reqfold").exists()
    return folder


def console_script() -> str:
    """The installed ``reqfold`` script beside this interpreter (skips when
    the project is not installed into this environment)."""
    found = shutil.which("reqfold", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("no reqfold console script beside this Python: not installed")
    return found


def user_env(project: Path) -> dict[str, str]:
    """The environment a user's shell has, with their project first on the path
    (so ``import reference`` means theirs), and no plugin autoload switch."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    env["PYTHONPATH"] = str(project)
    env["NO_COLOR"] = "1"
    return env


def run_here(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        list(argv),
        cwd=project,
        env=user_env(project),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_projects_own_packages_shadow_those_names_for_its_python(
    project: Path,
) -> None:
    # the premise of every test below: in this folder the names are the project's
    done = run_here(
        project, sys.executable, "-c", "import fakes; print(fakes.FakeModel.name)"
    )
    assert done.stdout.strip() == "the project fakes", done.stderr


@pytest.mark.spec("CHECK-1")
def test_reqfold_run_from_a_project_with_its_own_reference_package_is_judged(
    project: Path,
) -> None:
    done = run_here(
        project,
        console_script(),
        "run",
        *("--only", "scenarios", "--scenario", "plain-turns", "--quiet"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: CONFORMANT" in done.stdout
    assert "the project reference ran" not in done.stdout + done.stderr


@pytest.mark.spec("CHECK-3")
def test_reqfold_probe_from_a_project_with_its_own_packages_is_judged(
    project: Path,
) -> None:
    chat = f"{PYTHON} -P -m reqfold.reference.chat --log-dir {{log_dir}}"
    done = run_here(
        project,
        console_script(),
        "probe",
        *("--cmd", chat, "--base-url-env", "OPENAI_BASE_URL"),
        *("--api-key-env", "OPENAI_API_KEY"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Verdict: CONFORMANT" in done.stdout


def plugin_installed() -> None:
    """Skips unless the installed reqfold declares the pytest entry point."""
    points = importlib.metadata.entry_points(group="pytest11")
    if not any(point.name == "reqfold" for point in points):
        pytest.skip("the installed reqfold declares no pytest11 entry point")


def test_pytest_in_a_project_with_its_own_conformance_package_starts(
    project: Path,
) -> None:
    plugin_installed()
    done = run_here(
        project, sys.executable, *("-m", "pytest", "-q", "-p", "no:cacheprovider")
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "ModuleNotFoundError" not in done.stdout + done.stderr


@pytest.mark.spec("CHECK-1")
def test_the_plugin_in_a_project_with_its_own_fakes_collects_and_passes(
    project: Path,
) -> None:
    plugin_installed()
    done = run_here(
        project,
        sys.executable,
        *("-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0"),
        *("--reqfold-impl", "reference", "--reqfold-revision", "session-prefix"),
        *("--reqfold-scenario", "plain-turns", "-k", "own or plain-turns"),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ImportError" not in done.stdout + done.stderr
    # the project's own test and the suite's scenario checks, side by side
    passed = int(done.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert passed > 20
