"""Benchmark: `dream lint` on a store of 200 memories over a project of 50,000 files, beside `git ls-files`.

The project is generated once in a temporary folder and committed to git:
Python modules under 500 packages, each defining a function and a
constant, a Makefile, a package.json and a pyproject.toml. Each memory
cites five things (paths, function names, environment variables, make
targets, a dependency); one claim in ten is stale. Both commands run as a
user runs them, in a child process, alternately, and the figure is the
median of --runs runs each, with the ratio lint / ls-files.

    python bench/bench_lint.py                # 50,000 files, 200 memories, 5 runs
    python bench/bench_lint.py --files 10000 --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import USER_ENV, load_average, median_pair  # noqa: E402

DREAM = str(Path(sys.executable).with_name("dream"))
GIT_ENV = {**USER_ENV, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_GLOBAL": "/dev/null"}
PACKAGES = 500


def make_project(root: Path, files: int) -> list[str]:
    """The project's module paths, written and committed."""
    paths = []
    per_package = max(files // PACKAGES, 1)
    for i in range(files - 3):
        rel = f"src/pkg{i % PACKAGES}/mod{i // PACKAGES}.py"
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"import os\n\n\ndef func_{i}():\n    return os.environ.get('SETTING_{i}')\n")
        paths.append(rel)
    (root / "Makefile").write_text("".join(f"target{t}:\n\ttrue\n" for t in range(50)))
    (root / "package.json").write_text(json.dumps({"name": "big", "scripts": {"build": "x"},
                                                   "dependencies": {"react": "^18.2.0"}}))
    (root / "pyproject.toml").write_text('[project]\nname = "big"\nversion = "1"\ndependencies = ["httpx>=0,<1"]\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", "generated"], check=True, env=GIT_ENV)
    assert per_package
    return paths


def make_store(store: Path, project: Path, paths: list[str], memories: int) -> int:
    """Memories citing the project; returns how many claims are stale."""
    rng = random.Random(7)
    store.mkdir(parents=True)
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f"project = {json.dumps(str(project))}\n")
    index, stale = [], 0
    for m in range(memories):
        claims = []
        for _ in range(5):
            i = rng.randrange(len(paths))
            wrong = rng.random() < 0.1
            stale += wrong
            kind = rng.choice(("path", "func", "env", "make"))
            if kind == "path":
                claims.append(f"`{paths[i].replace('.py', '_gone.py') if wrong else paths[i]}`")
            elif kind == "func":
                claims.append(f"`func_{i}{'_gone' if wrong else ''}()`")
            elif kind == "env":
                claims.append(f"`SETTING_{i}{'_GONE' if wrong else ''}`")
            else:
                claims.append(f"`make target{rng.randrange(50) + (100 if wrong else 0)}`")
        body = f"Memory {m}: " + ", ".join(claims) + "; the UI is on `react@18`.\n"
        (store / f"project_{m}.md").write_text(
            f"---\nname: m{m}\ndescription: memory {m}\ntype: project\n---\n{body}")
        index.append(f"- [m{m}](project_{m}.md) — memory {m}\n")
    (store / "MEMORY.md").write_text("".join(index))
    return stale


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--memories", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-lint-"))
    try:
        project, store = work / "project", work / "store"
        project.mkdir()
        paths = make_project(project, args.files)
        stale = make_store(store, project, paths, args.memories)
        env = {**USER_ENV, "DREAM_CONFIG": str(work / "no-config.toml")}
        lint = ["dream", "lint", "--store", str(store), "--json"]
        done = subprocess.run([DREAM, *lint[1:]], capture_output=True, text=True, env=env)
        report = json.loads(done.stdout)

        def run_lint() -> None:
            subprocess.run([DREAM, *lint[1:]], capture_output=True, env=env)

        def run_ls_files() -> None:
            subprocess.run(["git", "-C", str(project), "ls-files"], capture_output=True, env=GIT_ENV)

        lint_s, ls_s = median_pair(run_lint, run_ls_files, args.runs)
        print(f"project: {args.files:,} files (git), store: {args.memories} memories, {report['claims']} claims, "
              f"{stale} stale as generated; load average {load_average()}")
        print(f"lint found {len(report['findings'])} stale claim(s), {report['unchecked']} not checked")
        print(f"dream lint     {lint_s:.3f} s (median of {args.runs})")
        print(f"git ls-files   {ls_s:.3f} s (median of {args.runs})")
        print(f"ratio lint / ls-files: {lint_s / ls_s:.1f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.pop("DREAM_STORE", None)
    main()
