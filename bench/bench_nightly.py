"""A realistic nightly dream, end to end, as a scheduler or cron would run it.

A store of 200 topic files and a 200-line index, plus 20 sessions of new
activity logs (5 MB in all, a few "remember"/"forget" requests among the
chatter), dreamed with `dream run --engine offline --json` as a new process:
CLI start-up, gate, lock, snapshot, gather, consolidate, validate and
propose, everything a user waits for. As on every night but the first,
the store was dreamed and accepted once before (so its files are already
saved as a version). Each run gets a fresh copy of the store (copied before
the clock starts). CPU (user + system of the whole process, as the kernel
counts it) is the headline: wall time depends on what else the machine runs.
Printed beside `python -c pass` and a bare Python process reading the same
files the dream reads (index, topics, logs), all three alternating in the
same run. Targets: 0.8 s CPU, 2 s wall.

    python bench/bench_nightly.py [--runs 5] [--profile /tmp/nightly.prof]
    python bench/bench_nightly.py --against /tmp/main-ref   # also the same dream with the code of another checkout

`--against DIR` (a checkout with its own venv, e.g. `git worktree add
/tmp/main-ref main`, then `python3 -m venv .venv && .venv/bin/pip install -e .`
in it) runs the same dream with that checkout's `.venv/bin/dream`, its code
and its data (phrases, prompts), alternating with the others: a before/after
in one run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import USER_ENV, Case, alternate, checkout_dream, median_cpu, median_wall, print_cases

TOPICS = 200
SESSIONS = 20
LOG_BYTES = 5_000_000
TARGET_S = 2.0
TARGET_CPU_S = 0.8
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


def store_files(store: Path) -> list[str]:
    """What the dream reads: MEMORY.md, the topic files and the activity logs (not its own .dream/ folder)."""
    return sorted(str(p) for p in store.rglob("*.md") if ".dream" not in p.relative_to(store).parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", type=Path, help="also run the dream once under cProfile and save its stats here")
    parser.add_argument("--against", type=Path, help="also the same dream with the code of this checkout (before/after)")
    args = parser.parse_args()
    dream = str(Path(sys.executable).with_name("dream"))
    other = checkout_dream(args.against) if args.against else None
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template"
        template.mkdir()
        make_store(template, rng)
        last_night(template, dream)
        make_logs(template, rng)
        files = store_files(template)
        logs = [p for p in files if "/logs/" in p]
        size = sum(Path(p).stat().st_size for p in logs)
        copies = iter(range(10_000))

        def fresh_store() -> Path:
            store = Path(tmp) / f"store{next(copies)}"
            shutil.copytree(template, store)
            return store

        def dream_run() -> list[str]:
            return [dream, "run", "--store", str(fresh_store()), "--engine", "offline", "--force", "--json"]

        against = [Case(f"the same, checkout {args.against}", lambda: [other, *dream_run()[1:]])] if other else []
        cases = alternate([
            Case("python -c pass", lambda: [sys.executable, "-c", "pass"]),
            Case(f"python reading the same {len(files)} files", lambda: [sys.executable, "-c", READ_ALL, *files]),
            *against,
            Case("dream run --engine offline", dream_run),
        ], args.runs)
        outcome = json.loads(cases[-1].runs[-1].stdout)
        if args.profile:
            subprocess.run([sys.executable, "-m", "cProfile", "-o", str(args.profile), "-m", "dream", *dream_run()[1:]],
                           check=True, capture_output=True, env=USER_ENV)
    print_cases(cases, f"nightly dream: {TOPICS} topics, {SESSIONS} sessions, {size / 1e6:.1f} MB of new logs")
    cpu, wall = median_cpu(cases[-1]), median_wall(cases[-1])
    print(f"  dream run: {outcome.get('status')}, {outcome.get('changes')} changes, "
          f"{outcome.get('sessions_read')} sessions read; CPU {cpu:.3f} s (target {TARGET_CPU_S} s: "
          f"{'met' if cpu <= TARGET_CPU_S else 'NOT met'}), wall {wall:.3f} s (target {TARGET_S} s: "
          f"{'met' if wall <= TARGET_S else 'NOT met'})")


# The baseline: a bare Python process that reads every file the dream reads, whole, as bytes.
READ_ALL = "import sys\nfor p in sys.argv[1:]:\n    open(p, 'rb').read()"


if __name__ == "__main__":
    main()
