"""Start-up: what `dream --help`, `status`, `diff`, `review` and `accept` cost a person at the prompt.

Each command runs as a new process through the installed console script,
alternating with `python -c pass` (the floor every Python command pays), so
both see the same load. Prints medians, the target (0.3 s) and what dream
adds over the bare interpreter.

    python bench/bench_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import USER_ENV, load_average

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 0.3


# Commands that end with a person's answer or "nothing pending" exit non-zero by design.
ALLOWED_EXIT = {"dream accept --store dreamed (nothing pending)": 2}


def timed(argv: list[str], name: str = "") -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                          env=USER_ENV)
    elapsed = time.perf_counter() - start
    assert done.returncode in (0, ALLOWED_EXIT.get(name, 0)), f"{argv}: exit {done.returncode}"
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    dream = str(Path(sys.executable).with_name("dream"))
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo"
        shutil.copytree(REPO / "data" / "demo", store, ignore=shutil.ignore_patterns(".dream"))
        dreamed = Path(tmp) / "dreamed"  # one pending proposal, for diff and review
        shutil.copytree(store, dreamed)
        subprocess.run([dream, "run", "--store", str(dreamed), "--engine", "offline"], check=True,
                       stdout=subprocess.DEVNULL, env=USER_ENV)
        decided = Path(tmp) / "decided"  # its proposal accepted: `dream accept` finds nothing pending
        shutil.copytree(dreamed, decided)
        subprocess.run([dream, "accept", "--store", str(decided)], check=True, stdout=subprocess.DEVNULL, env=USER_ENV)
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "dream --help": [dream, "--help"],
            "dream status --store demo": [dream, "status", "--store", str(store)],
            "dream status --store demo --json": [dream, "status", "--store", str(store), "--json"],
            "dream diff --store dreamed": [dream, "diff", "--store", str(dreamed)],
            "dream review --store dreamed (no tty)": [dream, "review", "--store", str(dreamed)],
            "dream accept --store dreamed (nothing pending)": [dream, "accept", "--store", str(decided)],
        }
        for name, argv in commands.items():
            timed(argv, name)  # warm the page cache and the bytecode cache
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv, name))
    floor = statistics.median(times["python -c pass"])
    print(f"start-up, median of {args.runs} alternating runs (load average {load_average()})")
    print(f"{'command':48} {'median':>8} {'over python':>12} {'target':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        verdict = "" if name.startswith("python") else ("met" if median <= TARGET_S else "NOT met")
        print(f"{name:48} {median:7.3f}s {median - floor:+11.3f}s {verdict:>8}")


if __name__ == "__main__":
    main()
