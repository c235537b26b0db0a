"""How `.dream/` grows with use: days of small edits, each followed by a dream and an accept, on a simulated clock.

A generated store of realistic size (topic files with frontmatter, an index
line per topic, about 136 KB) lives through `--days` days. Each day the
agent edits about 1 % of the memory (a line appended to one topic file, a
line changed in another) and writes one activity log with a "remember"
request, so the offline engine proposes a new memory (a topic file and an
index line); the proposal is accepted. The clock dream reads (`time.time`)
moves a day forward each day, so versions age as they would: gc after
accept (the default) collects what is older than the 90-day window.

Two stores live the same days in the same run, one day each in turn: one
with the default settings, and the baseline with `auto_gc = false` (what
main did before gc ran by itself: nothing runs gc unless a person does). At
the end we print, per store and per folder of `.dream/`, the bytes in
files, the space they take in 4 KB blocks and the number of files, against
what the user keeps outside `.dream/` (memory and activity logs) in the same
unit: the headline ratio is apparent bytes (st_size) over apparent bytes,
with the 4 KB-block ratio beside it.

Target: `.dream/` at most 3x the memory with the default settings.

    python bench/bench_versions.py --days 365          # the issue's year
    python bench/bench_versions.py --days 20 --keep /tmp/store   # keep the stores to look at
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
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


BLOCK = 4096
DAY_SECONDS = 86_400.0


class SimulatedClock:
    """`time.time` moved forward by whole days: what dream stamps versions with and gc ages them by."""

    def __init__(self) -> None:
        self.days = 0
        self._real = time.time

    def __enter__(self) -> "SimulatedClock":
        time.time = lambda: self._real() + self.days * DAY_SECONDS
        return self

    def __exit__(self, *exc) -> None:
        time.time = self._real


@dataclass
class Entry:
    size: int = 0  # bytes in files
    blocks: int = 0  # bytes in 4 KB blocks (each file rounded up)
    files: int = 0

    def add(self, size: int) -> None:
        self.size += size
        self.blocks += -(-size // BLOCK) * BLOCK
        self.files += 1


def dream_size(dream: Path) -> dict[str, Entry]:
    """Top-level entry of `.dream/` -> its files' bytes, 4 KB blocks and count."""
    sizes: dict[str, Entry] = {}
    for entry in sorted(dream.iterdir()):
        paths = [entry] if entry.is_file() else [p for p in entry.rglob("*") if p.is_file()]
        sizes[entry.name] = Entry()
        for path in paths:
            sizes[entry.name].add(path.lstat().st_size)
    return sizes


@dataclass
class Life:
    """One store living the days: its own random edits (same seed for both) and its day times."""

    root: Path
    rng: random.Random
    seconds: list[float] = field(default_factory=list)

    def live_day(self, day: int) -> None:
        edit_day(self.root, self.rng)
        write_log(self.root, day, self.rng)
        start = time.perf_counter()
        outcome = run(self.root, engine="offline", force=True)
        if outcome.status == "proposed":
            accept(self.root, outcome.proposal_id)
            self.seconds.append(time.perf_counter() - start)
        elif outcome.status != "noop":  # a request the engine finds covered already: nothing to accept
            raise SystemExit(f"day {day}: run ended {outcome.status} ({outcome.reason}: {outcome.error})")


def outside_dream(root: Path) -> Entry:
    """What the user keeps: every file of the store outside `.dream/` (memory and activity logs), one unit each way."""
    kept = Entry()
    for path in root.rglob("*"):
        if path.is_file() and ".dream" not in path.relative_to(root).parts:
            kept.add(path.lstat().st_size)
    return kept


def totals(root: Path) -> tuple[Entry, Entry, dict[str, Entry]]:
    memory = outside_dream(root)
    sizes = dream_size(root / ".dream")
    total = Entry()
    for e in sizes.values():
        total.size, total.blocks, total.files = total.size + e.size, total.blocks + e.blocks, total.files + e.files
    return memory, total, sizes


def report(lives: dict[str, Life]) -> None:
    figures = {name: totals(life.root) for name, life in lives.items()}
    names = list(lives)
    entries = sorted({e for _, _, sizes in figures.values() for e in sizes})
    print(f"{'.dream/ entry':<22}" + "".join(f"{name + ': bytes':>24}{'4 KB blocks':>13}{'files':>7}"
                                              for name in names))
    for entry in entries:
        row = [figures[n][2].get(entry, Entry()) for n in names]
        print(f"{entry:<22}" + "".join(f"{e.size:>24,}{e.blocks:>13,}{e.files:>7,}" for e in row))
    print(f"{'total':<22}" + "".join(f"{figures[n][1].size:>24,}{figures[n][1].blocks:>13,}{figures[n][1].files:>7,}"
                                     for n in names))
    for name in names:
        kept, total, sizes = figures[name]
        files = len(read_tree(lives[name].root))
        print(f"{name}: memory {files} files; memory + logs {kept.files:,} files, {kept.size:,} apparent bytes; "
              f".dream/ / (memory + logs): {total.size / kept.size:.2f}x in apparent bytes (st_size), "
              f"{total.blocks / kept.blocks:.2f}x in 4 KB blocks; .dream/ {total.files:,} files; "
              f"run + accept median {statistics.median(lives[name].seconds):.3f} s, "
              f"max {max(lives[name].seconds):.3f} s ({len(lives[name].seconds)} days accepted)")
    if len(names) == 2:
        (a, b), (ta, tb) = names, (figures[names[0]][1], figures[names[1]][1])
        print(f"{a} / {b}: bytes {ta.size / tb.size:.2f}, 4 KB blocks {ta.blocks / tb.blocks:.2f}, "
              f"files {ta.files / tb.files:.2f}, run + accept median "
              f"{statistics.median(lives[a].seconds) / statistics.median(lives[b].seconds):.2f}")
    print("target: .dream/ <= 3x the memory with the default settings (here: apparent bytes of .dream/ over "
          "apparent bytes of memory + logs; both in blocks beside it)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=100)
    parser.add_argument("--topics", type=int, default=195)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-baseline", action="store_true", help="only the store with the default settings")
    parser.add_argument("--keep", type=Path, help="build the stores under this folder and keep them")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="bench-versions-")
    base = args.keep or Path(tmp)
    names = ["defaults"] if args.no_baseline else ["defaults", "auto_gc off"]
    lives = {name: Life(base / name.replace(" ", "-"), random.Random(args.seed)) for name in names}
    try:
        for name, life in lives.items():
            life.root.mkdir(parents=True)
            make_store(life.root, args.topics, life.rng)
            if name != "defaults":
                (life.root / ".dream").mkdir()
                (life.root / ".dream" / "config.toml").write_text("auto_gc = false\n")
        memory = sum(len(d) for d in read_tree(lives["defaults"].root).values())
        print(f"store: {args.topics} topic files + MEMORY.md, {memory:,} bytes; {args.days} days; "
              f"{' and '.join(names)} in turn (dream module: {os.path.dirname(run.__code__.co_filename)})")
        with SimulatedClock() as clock:
            for day in range(1, args.days + 1):
                clock.days = day
                for life in lives.values():
                    life.live_day(day)
        report(lives)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
