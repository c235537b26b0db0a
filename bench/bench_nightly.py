"""A realistic nightly dream, end to end, as a scheduler or cron would run it.

A store of 200 topic files and a 200-line index, plus 20 sessions of new
activity logs (5 MB in all, a few "remember"/"forget" requests among the
chatter), dreamed with `dream run --engine offline --json` as a new process:
CLI start-up, gate, lock, snapshot, gather, consolidate, validate and
propose, everything a user waits for. As on every night but the first,
the store was dreamed and accepted once before (so its files are already
saved as a version). Each run gets a fresh copy of the store. Printed beside `python -c pass` and `cat` of the same logs, measured
alternately in the same run. Target: 2 s.

    python bench/bench_nightly.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import USER_ENV, load_average

TOPICS = 200
SESSIONS = 20
LOG_BYTES = 5_000_000
TARGET_S = 2.0
TYPES = ("user", "feedback", "project", "reference")
WORDS = ("deploy cache index retry billing webhook schema queue worker release token budget review "
         "migration latency rollout alert dashboard invoice ledger export import sync").split()


def sentence(rng: random.Random, words: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def make_store(root: Path, rng: random.Random) -> None:
    index = ["# Memory index", ""]
    for i in range(TOPICS):
        kind = TYPES[i % len(TYPES)]
        name = f"{kind}_topic_{i:03d}.md"
        body = "\n".join(sentence(rng) for _ in range(6))
        (root / name).write_text(f"---\nname: Topic {i}\ndescription: {sentence(rng, 8)}\ntype: {kind}\n---\n\n{body}\n")
        index.append(f"- [Topic {i}]({name}) — {sentence(rng, 8)}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


def make_logs(root: Path, rng: random.Random) -> None:
    per_session = LOG_BYTES // SESSIONS
    for s in range(SESSIONS):
        day = root / "logs" / "2026" / "11" / f"{10 + s % 15:02d}"
        day.mkdir(parents=True, exist_ok=True)
        lines = [f"> remember that the {rng.choice(WORDS)} {rng.choice(WORDS)} runs on port {8000 + s}",
                 f"> forget topic {rng.randrange(TOPICS)}" if s % 5 == 0 else "> thanks"]
        size = sum(len(x) for x in lines)
        while size < per_session:
            line = f"{rng.choice('<<..>')} {sentence(rng, 20)}"
            lines.append(line)
            size += len(line) + 1
        (day / f"session{s:02d}-nightly-work.md").write_text("\n".join(lines) + "\n")


def last_night(store: Path, dream: str) -> None:
    """Dream and accept once before the new logs arrive: a nightly run finds the store's blobs already saved."""
    day = store / "logs" / "2026" / "11" / "09"
    day.mkdir(parents=True)
    (day / "session-yesterday.md").write_text("> remember that the nightly bench store was set up\n< noted\n")
    subprocess.run([dream, "run", "--store", str(store), "--engine", "offline", "--force"], env=USER_ENV,
                   check=True, capture_output=True)
    subprocess.run([dream, "accept", "--store", str(store)], env=USER_ENV, check=True, capture_output=True)


def timed(argv: list[str], check: bool = True) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=check, env=USER_ENV)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    dream = str(Path(sys.executable).with_name("dream"))
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        template.mkdir()
        make_store(template, rng)
        last_night(template, dream)
        make_logs(template, rng)
        logs = sorted(str(p) for p in (template / "logs").rglob("*.md"))
        times: dict[str, list[float]] = {"python -c pass": [], "cat logs": [], "dream run": []}
        size = sum(Path(p).stat().st_size for p in logs)
        outcome = {}
        warm = Path(tmp) / "warm"
        shutil.copytree(template, warm)
        timed([dream, "run", "--store", str(warm), "--engine", "offline", "--force", "--json"])  # caches, as every night after the first
        for run in range(args.runs):
            store = Path(tmp) / f"store{run}"
            shutil.copytree(template, store)
            times["python -c pass"].append(timed([sys.executable, "-c", "pass"])[0])
            times["cat logs"].append(timed(["cat", *logs])[0])
            seconds, out = timed([dream, "run", "--store", str(store), "--engine", "offline", "--force", "--json"])
            times["dream run"].append(seconds)
            outcome = json.loads(out)
    print(f"nightly dream: {TOPICS} topics, {SESSIONS} sessions, {size / 1e6:.1f} MB of new logs; "
          f"median of {args.runs} (load average {load_average()})")
    for name, values in times.items():
        print(f"  {name:16} {statistics.median(values):7.3f} s")
    median = statistics.median(times["dream run"])
    print(f"  dream run: {outcome.get('status')}, {outcome.get('changes')} changes, "
          f"{outcome.get('sessions_read')} sessions read; target {TARGET_S} s: {'met' if median <= TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    main()
