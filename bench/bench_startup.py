"""Start-up: what `dream --help`, `status`, `diff`, `review` and `accept` cost a person at the prompt.

Each command runs as a new process through the installed console script,
alternating with `python -c pass` (the floor every Python command pays), so
both see the same load; `accept` accepts a real pending proposal (the
journaled apply a person waits for), on a fresh copy made before the clock
starts; that store was dreamed and accepted once before, so its history holds
an event, as a real store's does. Prints CPU and wall (medians with min-max),
the target (0.3 s wall) and what dream adds over the bare interpreter.

    python bench/bench_startup.py [--runs 15]
    python bench/bench_startup.py --against /tmp/main-ref   # also each command with another checkout's code

`--against DIR` (a checkout with its own venv, e.g. `git worktree add /tmp/main-ref main`, then
`python3 -m venv .venv && .venv/bin/pip install -e .` in it) runs each command a second time with that
checkout's `.venv/bin/dream` (its code and its data), alternating with the others: a before/after in one
run, as `bench_nightly.py --against` does.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchlib import USER_ENV, Case, alternate, checkout_dream, median_wall, print_cases

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 0.3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--against", type=Path, help="also each command with the code of this checkout (before/after)")
    args = parser.parse_args()
    dream = str(Path(sys.executable).with_name("dream"))
    other = checkout_dream(args.against) if args.against else None
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo"
        shutil.copytree(REPO / "data" / "demo", store, ignore=shutil.ignore_patterns(".dream"))
        dreamed = Path(tmp) / "dreamed"  # one pending proposal, for diff, review and accept
        shutil.copytree(store, dreamed)
        dream_once(dream, dreamed)
        copies = iter(range(10_000))

        def pending() -> list[str]:
            """A fresh copy of the dreamed store, its proposal pending: accept journals and applies it for real."""
            copy = Path(tmp) / f"pending{next(copies)}"
            shutil.copytree(dreamed, copy)
            return [dream, "accept", "--store", str(copy)]

        commands = [
            Case("dream --help", lambda: [dream, "--help"]),
            Case("dream status --store demo", lambda: [dream, "status", "--store", str(store)]),
            Case("dream status --store demo --json", lambda: [dream, "status", "--store", str(store), "--json"]),
            Case("dream diff --store dreamed", lambda: [dream, "diff", "--store", str(dreamed)]),
            Case("dream review --store dreamed (no tty)", lambda: [dream, "review", "--store", str(dreamed)]),
            Case("dream accept (a real pending proposal)", pending),
        ]
        against = [Case(f"{case.name}, checkout {args.against.name}", _with_script(case.prepare, other))
                   for case in commands] if other else []
        cases = alternate([Case("python -c pass", lambda: [sys.executable, "-c", "pass"]), *against, *commands],
                          args.runs)
    print_cases(cases, "start-up")
    floor = median_wall(cases[0])
    for case in cases[1:]:
        wall = median_wall(case)
        print(f"  {case.name:46} wall {wall - floor:+.3f} s over python; target {TARGET_S} s: "
              f"{'met' if wall <= TARGET_S else 'NOT met'}")


def dream_once(dream: str, store: Path) -> None:
    """A proposal pending on a store that has been dreamed and accepted before, as every night's but the first:
    its history holds an accept event, which an accept reads (to record its own only once)."""
    for command in ("run", "accept"):
        subprocess.run([dream, command, "--store", str(store), *(["--engine", "offline"] if command == "run" else [])],
                       check=True, stdout=subprocess.DEVNULL, env=USER_ENV)
    day = store / "logs" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    (day / "session-next-day.md").write_text("> remember that the release branch is cut on Thursdays\n< noted\n")
    subprocess.run([dream, "run", "--store", str(store), "--engine", "offline", "--force"], check=True,
                   stdout=subprocess.DEVNULL, env=USER_ENV)


def _with_script(argv: Callable[[], list[str]], script: str) -> Callable[[], list[str]]:
    """The same command with another checkout's `dream` script in place of this one's."""
    return lambda: [script, *argv()[1:]]


if __name__ == "__main__":
    main()
