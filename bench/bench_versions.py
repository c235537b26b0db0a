"""How `.dream/` grows with use: 100 days of small edits, each followed by a dream and an accept.

A generated store of realistic size (topic files with frontmatter, an index
line per topic, about 136 KB) lives through `--days` days. Each day the
agent edits about 1 % of the memory (a line appended to one topic file, a
line changed in another) and writes one activity log with a "remember"
request, so the offline engine proposes a new memory (a topic file and an
index line); the proposal is accepted. At the end we print the size of
`.dream/` against the size of the memory files, per folder of `.dream/`.

Target: `.dream/` at most 3x the memory (74x on the layout before
content-addressed trees). Sizes are apparent sizes (bytes in files); the
space on disk, rounded up to blocks, is printed beside them.

    python bench/bench_versions.py                 # 100 days, 195 topics
    python bench/bench_versions.py --days 20 --keep /tmp/store   # keep the store to look at
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from dream.pipeline.run import run
from dream.review.decide import accept
from dream.store.tree import read_tree

WORDS = """the a to of and in is for on that with it be as this by use run not when from at or test
deploy build release config service database cache queue worker api client server branch merge
review commit staging production migration schema index table column query retry timeout webhook
payment invoice ledger account user team owner script pipeline job step image container cluster
node pod secret token key vault log metric alert dashboard latency error warning flaky fix bug
feature flag rollout rollback version tag changelog docs readme lint format type check coverage
mock fixture integration unit end after before always never only prefer avoid keep remove add
update rename move split merge weekly daily monday friday morning sprint ticket issue pull request
""".split()
TYPES = ("user", "feedback", "project", "reference")
START = date(2026, 3, 2)


def sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def make_store(root: Path, topics: int, rng: random.Random) -> None:
    index = ["# Memory index", ""]
    for i in range(topics):
        name = f"{TYPES[i % 4]}_{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i:03d}"
        description = sentence(rng, 8)
        body = "\n".join(f"- {sentence(rng, rng.randint(8, 16))}" for _ in range(rng.randint(4, 9)))
        (root / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ntype: {TYPES[i % 4]}\n---\n\n{body}\n")
        index.append(f"- [{name}]({name}.md) — {description}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


def topic_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*.md") if p.name != "MEMORY.md")


def edit_day(root: Path, rng: random.Random) -> None:
    """About 1 % of the memory: one line appended to a topic file, one line changed in another."""
    grown, changed = rng.sample(topic_files(root), 2)
    with grown.open("a") as fh:
        fh.write(f"- {sentence(rng, 12)}\n")
    lines = changed.read_text().splitlines(keepends=True)
    body = [i for i, line in enumerate(lines) if line.startswith("- ")]
    if body:
        lines[rng.choice(body)] = f"- {sentence(rng, 12)}\n"
        changed.write_text("".join(lines))


def write_log(root: Path, day: int, rng: random.Random) -> None:
    when = START + timedelta(days=day)
    folder = root / "logs" / f"{when:%Y/%m/%d}"
    folder.mkdir(parents=True, exist_ok=True)
    fact = " ".join(rng.choice(WORDS) for _ in range(10)) + f" (area {day})"
    (folder / f"s{day:03d}-work.md").write_text(
        f"> remember that {fact}\n< Noted.\n. Bash make test\n< make test: 412 passed.\n")


def dream_size(dream: Path) -> dict[str, tuple[int, int]]:
    """Top-level entry of `.dream/` -> (bytes in files, bytes on disk)."""
    sizes: dict[str, tuple[int, int]] = {}
    for entry in sorted(dream.iterdir()):
        paths = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        stats = [p.lstat() for p in paths]
        sizes[entry.name] = (sum(s.st_size for s in stats), sum(s.st_blocks * 512 for s in stats))
    return sizes


def live_days(root: Path, days: int, rng: random.Random) -> list[float]:
    seconds = []
    for day in range(1, days + 1):
        edit_day(root, rng)
        write_log(root, day, rng)
        start = time.perf_counter()
        outcome = run(root, engine="offline", force=True)
        if outcome.status == "proposed":
            accept(root, outcome.proposal_id)
            seconds.append(time.perf_counter() - start)
        elif outcome.status != "noop":  # a request the engine finds covered already: nothing to accept
            raise SystemExit(f"day {day}: run ended {outcome.status} ({outcome.reason}: {outcome.error})")
    return seconds


def report(root: Path, seconds: list[float]) -> None:
    memory = sum(len(data) for data in read_tree(root).values())
    sizes = dream_size(root / ".dream")
    total = sum(s for s, _ in sizes.values())
    on_disk = sum(d for _, d in sizes.values())
    print(f"{'.dream/ entry':<24} {'bytes':>12} {'on disk':>12}")
    for name, (size, disk) in sizes.items():
        print(f"{name:<24} {size:>12,} {disk:>12,}")
    print(f"{'total':<24} {total:>12,} {on_disk:>12,}")
    versions_only = sum(s for name, (s, _) in sizes.items() if not name.startswith("history"))
    print(f"memory files: {len(read_tree(root))} files, {memory:,} bytes")
    print(f".dream/ / memory: {total / memory:.2f}x in bytes ({on_disk / memory:.1f}x on disk); "
          f"target <= 3x, 74x before")
    print(f".dream/ without the run history / memory: {versions_only / memory:.2f}x in bytes")
    print(f"{len(seconds)} days proposed and accepted; run + accept: median {statistics.median(seconds):.3f} s, "
          f"max {max(seconds):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--topics", type=int, default=195)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the store here and keep it")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="bench-versions-")
    root = args.keep or Path(tmp) / "store"
    try:
        root.mkdir(parents=True)
        make_store(root, args.topics, rng)
        memory = sum(len(d) for d in read_tree(root).values())
        print(f"store: {args.topics} topic files + MEMORY.md, {memory:,} bytes; {args.days} days "
              f"(dream module: {os.path.dirname(run.__code__.co_filename)})")
        report(root, live_days(root, args.days, rng))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
