"""The package as a user gets it: pyproject names every package, and the built wheel works installed.

The wheel test installs into a fresh virtual environment outside the checkout
and runs the `dream` command from a folder outside it too, so a module
missing from the wheel, a prompt template left out of its package data, or
an import of something that only the checkout has (`flows`, `tests`) fails
here rather than for the first user.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest
from helpers.cli import Result
from helpers.stores import DEMO, REPO
from helpers.fake_anthropic import FakeAnthropic, Reply, fake_api, memory, text  # noqa: F401

SETUPTOOLS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_pyproject_lists_every_package_folder_under_dream():
    """setuptools installs only the packages it is told about; a new subpackage left off the list
    works from the checkout and is missing from every install."""
    on_disk = {".".join(folder.relative_to(REPO).parts) for folder in _python_folders(REPO / "dream")}
    mapped = set(SETUPTOOLS.get("package-dir", {}))  # dream.prompts lives in prompts/
    listed = set(SETUPTOOLS["packages"])
    assert on_disk - listed == set(), "package folders missing from pyproject's [tool.setuptools] packages"
    assert listed - on_disk - mapped == set(), "pyproject lists packages that have no folder"


def _python_folders(root: Path) -> set[Path]:
    return {path.parent for path in root.rglob("*.py") if "__pycache__" not in path.parts}


# ---------------------------------------------------------------- the installed wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the checkout: pip builds in the source folder and would
    leave build/ and dream.egg-info/ in the repository."""
    source = tmp_path_factory.mktemp("source") / "dream"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", ".pytest_cache", "build", "dist", "*.egg-info", ".dream"))
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    [found] = out.glob("dream-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment outside the checkout with the wheel installed.

    It borrows the dependencies from the test's own environment through a
    .pth file instead of installing them: that needs no network and takes
    seconds. It is still a clean test of the wheel: the venv's own
    site-packages comes first on sys.path, and the .pth files in the
    borrowed folder are not processed, so the test environment's editable
    install of dream (a finder hook in such a file) stays inactive. The venv
    is made without pip (ensurepip alone takes longer than the rest); this
    pip installs into it through ``--python``.
    """
    home = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=120)
    python = home / "bin" / "python"
    installed = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                                "--no-index", str(wheel)], capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "_borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return home


def _outside(venv: Path, tmp_path: Path, *args: str) -> Result:
    """Run a program of the venv from a folder outside the checkout, without the checkout on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cwd = tmp_path / "elsewhere"
    cwd.mkdir(exist_ok=True)
    proc = subprocess.run([str(venv / "bin" / args[0]), *args[1:]], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=300)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def _store(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    return store


@pytest.mark.slow
def test_the_wheel_ships_the_templates_and_not_the_flows(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"dream/prompts/{p.name}" for p in (REPO / "prompts").glob("*.j2")} <= set(names)
    assert {f"dream/review/templates/{p.name}" for p in (REPO / "dream/review/templates").glob("*.j2")} <= set(names)
    assert any(n.startswith("dream/prompts/") and n.endswith(".j2") for n in names)
    assert [n for n in names if n.split("/")[0] in ("flows", "tests", "prompts")] == []


@pytest.mark.slow
def test_the_installed_package_is_the_one_that_runs(venv, tmp_path):
    where = _outside(venv, tmp_path, "python", "-c", "import dream, dream.prompts; print(dream.__file__); "
                                                     "print(dream.prompts.__file__)")
    assert where.code == 0, where.stderr
    assert all(Path(line).is_relative_to(venv) for line in where.stdout.splitlines()), where.stdout
    flows = _outside(venv, tmp_path, "python", "-c", "import flows")
    assert flows.code == 1 and "No module named 'flows'" in flows.stderr


@pytest.mark.slow
def test_installed_dream_run_proposes_with_the_offline_engine(venv, tmp_path):
    run = _outside(venv, tmp_path, "dream", "run", "--store", str(_store(tmp_path)), "--engine", "offline", "--json")
    assert run.code == 0, run.stderr
    assert json.loads(run.stdout)["status"] == "proposed", run.stdout


@pytest.mark.slow
def test_installed_dream_eval_finds_its_cases(venv, tmp_path):
    run = _outside(venv, tmp_path, "dream", "eval", "--only", "forget", "--json")
    assert run.code == 0, run.stderr
    card = json.loads(run.stdout)
    assert card["engine"] == "offline" and card["overall"]["total"] > 0, run.stdout


@pytest.mark.slow
def test_installed_dream_run_proposes_with_the_claude_engine(venv, tmp_path, fake_api: FakeAnthropic):
    store = _store(tmp_path)
    index = (store / "MEMORY.md").read_text().splitlines(keepends=True)
    [duplicate] = [line for line in index if "](webhook_retries.md)" in line]
    [too_long] = [line for line in index if "](feedback_small_prs.md)" in line]  # the demo's line over 150 chars
    fake_api.play(
        Reply([memory("delete", path="/memories/webhook_retries.md"),
               memory("str_replace", path="/memories/MEMORY.md", old_str=duplicate, new_str=""),
               memory("str_replace", path="/memories/MEMORY.md", old_str=too_long,
                      new_str="- [Small PRs](feedback_small_prs.md) — under ~400 lines\n")]),
        Reply([text("- merged webhook_retries.md into project_webhook_retries.md: same policy twice")]),
    )

    run = _outside(venv, tmp_path, "dream", "run", "--store", str(store), "--engine", "claude", "--json")

    assert run.code == 0, run.stdout + run.stderr
    outcome = json.loads(run.stdout)
    assert (outcome["status"], outcome["engine"]) == ("proposed", "claude"), outcome
    assert fake_api.protocol_errors == [] and len(fake_api.requests) == 2
