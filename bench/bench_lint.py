"""Benchmark: `dream lint` on a store of 200 memories over a project of 50,000 files, beside `git ls-files`.

The project is generated once in a temporary folder and committed to git:
Python modules under 500 packages, each defining a function and reading
an environment variable, a Makefile, a package.json and a pyproject.toml.
A second commit deletes one module in ten and 100 make targets. Each
memory cites five things (paths, function names, environment variables,
make targets, a dependency); one claim in ten is stale: half cite what the
second commit deleted (git names that commit), half what never existed (as
a model may invent it: lint reads the whole history to say so). The commands run as a user runs them, in a child
process, in turn: `dream lint` cold (its cache in .dream/ removed first),
`dream lint` again (answered from that cache: same store, same HEAD),
`git ls-files` and `dream --help` (dream's own start-up); each figure is the median of --runs runs, with its ratio to
ls-files.

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
from benchlib import USER_ENV, load_average, medians  # noqa: E402

DREAM = str(Path(sys.executable).with_name("dream"))
GIT_ENV = {**USER_ENV, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com", "GIT_CONFIG_GLOBAL": "/dev/null"}
PACKAGES = 500


def make_project(root: Path, files: int) -> list[str]:
    """The project's module paths as first committed; a second commit deletes every tenth (`gone`)."""
    paths = []
    for i in range(files - 3):
        rel = f"src/pkg{i % PACKAGES}/mod{i // PACKAGES}.py"
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"import os\n\n\ndef func_{i}():\n    return os.environ.get('SETTING_{i}')\n")
        paths.append(rel)
    (root / "Makefile").write_text("".join(f"target{t}:\n\ttrue\n" for t in range(150)))
    (root / "package.json").write_text(json.dumps({"name": "big", "scripts": {"build": "x"},
                                                   "dependencies": {"react": "^18.2.0"}}))
    (root / "pyproject.toml").write_text('[project]\nname = "big"\nversion = "1"\ndependencies = ["httpx>=0,<1"]\n')
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=GIT_ENV)
    commit(root, "generated")
    for i in range(0, len(paths), 10):
        (root / paths[i]).unlink()
    (root / "Makefile").write_text("".join(f"target{t}:\n\ttrue\n" for t in range(50)))
    commit(root, "drop every tenth module and targets 50-149")
    return paths


def commit(root: Path, message: str) -> None:
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=GIT_ENV)
    subprocess.run(["git", "-C", str(root), "commit", "-q", "-m", message], check=True, env=GIT_ENV)


def make_store(store: Path, project: Path, paths: list[str], memories: int) -> int:
    """Memories citing the project; returns how many claims are stale (they cite what the second commit deleted)."""
    rng = random.Random(7)
    store.mkdir(parents=True)
    (store / ".dream").mkdir()
    (store / ".dream" / "config.toml").write_text(f"project = {json.dumps(str(project))}\n")
    index, stale = [], 0
    for m in range(memories):
        claims = []
        for _ in range(5):
            wrong = rng.random() < 0.1
            made_up = "_made_up" if wrong and rng.random() < 0.5 else ""  # never in the project, as a model may invent
            stale += wrong
            i = rng.randrange(len(paths) // 10) * 10 if wrong else rng.randrange(len(paths))
            i += 0 if wrong or i % 10 else 1  # a module the second commit kept
            kind = rng.choice(("path", "func", "env", "make"))
            if kind == "path":
                claims.append(f"`{paths[i].replace('.py', made_up + '.py')}`")
            elif kind == "func":
                claims.append(f"`func_{i}{made_up}()`")
            elif kind == "env":
                claims.append(f"`SETTING_{i}{made_up.upper()}`")
            else:
                claims.append(f"`make target{rng.randrange(50) + (50 if wrong else 0) + (100 if made_up else 0)}`")
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
        lint = [DREAM, "lint", "--store", str(store), "--json"]
        cache = store / ".dream" / "lint-cache.json"
        report = json.loads(subprocess.run(lint, capture_output=True, text=True, env=env).stdout)
        again = json.loads(subprocess.run(lint, capture_output=True, text=True, env=env).stdout)
        assert again["findings"] == report["findings"] and again["cached"] == args.memories + 1, "cache answered"

        def run_cold() -> None:
            cache.unlink(missing_ok=True)
            subprocess.run(lint, capture_output=True, env=env)

        def run_cached() -> None:
            subprocess.run(lint, capture_output=True, env=env)

        def run_ls_files() -> None:
            subprocess.run(["git", "-C", str(project), "ls-files"], capture_output=True, env=GIT_ENV)

        def run_help() -> None:
            subprocess.run([DREAM, "--help"], capture_output=True, env=env)

        cold_s, cached_s, ls_s, help_s = medians([run_cold, run_cached, run_ls_files, run_help], args.runs)
        with_commit = sum(1 for f in report["findings"] if f["commit"])  # the deleted half
        print(f"project: {args.files:,} files (git, 2 commits), store: {args.memories} memories, "
              f"{report['claims']} claims, {stale} stale as generated; load average {load_average()}")
        print(f"lint found {len(report['findings'])} stale claim(s) ({with_commit} naming the commit), "
              f"{report['unchecked']} not checked")
        print(f"dream lint, cold     {cold_s:.3f} s (median of {args.runs})  {cold_s / ls_s:.1f}x ls-files")
        print(f"dream lint, cached   {cached_s:.3f} s (median of {args.runs})  {cached_s / ls_s:.1f}x ls-files")
        print(f"git ls-files         {ls_s:.3f} s (median of {args.runs})")
        print(f"dream --help         {help_s:.3f} s (median of {args.runs}): the start-up any dream command pays")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.pop("DREAM_STORE", None)
    main()
