"""Offline engine speed and memory on generated stores of 2,500 / 5,000 / 10,000 memories.

Each size runs in its own child process (so peak RSS is that run's own), on a
fresh staging copy, three times; we print the median. The baseline, measured
in the same child on the same files, is reading and hashing every file: the
least any consolidation must do. Targets: <= 5 s and <= 1 GB at 5,000, and
time growing well below 4x (quadratic) when the store doubles.

    /work/venv/bin/python bench/bench_offline.py [sizes...]
"""

from __future__ import annotations

import hashlib
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

SYLLABLES = "ka lo mi ne ru sa te vi do pe ga fu zi bo ha ly".split()
# A Zipf-like vocabulary, as in real notes: a few very common words
# ("the", "and", "use") and a long tail of rare names, paths and terms.
VOCABULARY = ["the", "and", "use", "for", "not", "run", "with", "when", "test", "deploy"] + [
    a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES][:6000]
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
WORDS = VOCABULARY[:40]
TYPES = ("user", "feedback", "project", "reference")
REPEATS = 3


def make_store(root: Path, count: int, seed: int = 7) -> None:
    """`count` topic files, 5% of them near-duplicates of another, all indexed."""
    rng = random.Random(seed)
    index = ["# Memory index", ""]
    bodies: list[str] = []
    for i in range(count):
        if bodies and rng.random() < 0.05:
            body = rng.choice(bodies) + " Also noted."
        else:
            words = rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(25, 60))
            body = f"Fact {i}: " + " ".join(words) + f" (ref {rng.getrandbits(40):x})."
            if rng.random() < 0.1:
                body += " It broke yesterday."
        bodies.append(body)
        name = f"mem_{i:05d}"
        type_ = TYPES[i % 4]
        text = (f"---\nname: {name}\ndescription: note {i} about {rng.choice(WORDS)}\n"
                f"type: {type_}\ncreated: 2026-0{1 + i % 9}-1{i % 10}\n---\n\n{body}\n")
        (root / f"{name}.md").write_text(text)
        index.append(f"- [{name}]({name}.md) — note {i} about {rng.choice(WORDS)}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")


def baseline(root: Path) -> float:
    start = time.perf_counter()
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.md")):
        digest.update(path.read_bytes())
    return time.perf_counter() - start


def one_size(count: int) -> dict:
    """Runs in a child process: generate, then time baseline and engine runs."""
    import polars as pl

    from dream.config import Settings
    from dream.engines.base import EngineInput
    from dream.engines.offline import OfflineEngine

    empty = pl.DataFrame(schema={"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64,
                                 "role": pl.Utf8, "text": pl.Utf8})
    engine_times, cpu_times, base_times, changes = [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        make_store(source, count)
        for run in range(REPEATS):
            staging = Path(tmp) / f"staging{run}"
            shutil.copytree(source, staging)
            base_times.append(baseline(staging))
            inp = EngineInput(staging, staging, empty, [], Settings(), date(2026, 12, 1))
            start, cpu = time.perf_counter(), time.process_time()
            result = OfflineEngine().consolidate(inp)
            engine_times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu)
            changes = len(result.changes)
    return {
        "memories": count,
        "engine_s": statistics.median(engine_times),
        "cpu_s": statistics.median(cpu_times),
        "baseline_s": statistics.median(base_times),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "changes": changes,
    }


def main(sizes: list[int]) -> None:
    rows = []
    for count in sizes:
        out = subprocess.run([sys.executable, __file__, "--one", str(count)],
                             check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    print(f"{'memories':>9} {'engine s':>9} {'cpu s':>7} {'read+hash s':>12} {'x baseline':>11} "
          f"{'peak RSS MB':>12} {'changes':>8} {'wall ratio':>11} {'cpu ratio':>10}")
    by_size = {r["memories"]: r for r in rows}
    for r in rows:
        half = by_size.get(r["memories"] // 2)
        ratio = f"{r['engine_s'] / half['engine_s']:.2f}" if half else "-"
        cpu_ratio = f"{r['cpu_s'] / half['cpu_s']:.2f}" if half else "-"
        print(f"{r['memories']:>9} {r['engine_s']:>9.3f} {r['cpu_s']:>7.3f} {r['baseline_s']:>12.4f} "
              f"{r['engine_s'] / r['baseline_s']:>11.0f} {r['peak_rss_mb']:>12.0f} {r['changes']:>8} "
              f"{ratio:>11} {cpu_ratio:>10}")
    print(f"(median of {REPEATS} runs per size, each size in its own process; ratios against the "
          "size half as big: 2.0 = linear, 4.0 = quadratic. Wall time includes one fsync per "
          "written file, so it is noisy on a busy disk; cpu time is not.)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        print(json.dumps(one_size(int(sys.argv[2]))))
    else:
        main([int(a) for a in sys.argv[1:]] or [2500, 5000, 10000])
