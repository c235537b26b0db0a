"""Start-up: what `dream --help` and `dream status` cost a person at the prompt.

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


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=USER_ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    dream = str(Path(sys.executable).with_name("dream"))
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo"
        shutil.copytree(REPO / "data" / "demo", store, ignore=shutil.ignore_patterns(".dream"))
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "dream --help": [dream, "--help"],
            "dream status --store demo": [dream, "status", "--store", str(store)],
            "dream status --store demo --json": [dream, "status", "--store", str(store), "--json"],
        }
        for argv in commands.values():
            timed(argv)  # warm the page cache and the bytecode cache
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, argv in commands.items():
                times[name].append(timed(argv))
    floor = statistics.median(times["python -c pass"])
    print(f"start-up, median of {args.runs} alternating runs (load average {load_average()})")
    print(f"{'command':36} {'median':>8} {'over python':>12} {'target':>8}")
    for name, values in times.items():
        median = statistics.median(values)
        verdict = "" if name.startswith("python") else ("met" if median <= TARGET_S else "NOT met")
        print(f"{name:36} {median:7.3f}s {median - floor:+11.3f}s {verdict:>8}")


if __name__ == "__main__":
    main()
