"""Benchmark: importing Claude Code transcripts into activity logs.

Generates realistic transcripts (default 200 MB: many turns, tool outputs of
a few KB with some over 1 MB, thinking, edits), then in the same run, each
figure the median of --runs runs (at least 5):

* ``cat`` over the same files to /dev/null (the baseline: reading the bytes)
  and a full import into a fresh store, alternating so that both see the
  same load; the ratio cat time / import time is the import's throughput
  relative to cat's;
* with --cold, the same with the page cache emptied before each run (root
  only; it empties the whole machine's cache);
* one session grows by a turn, and the incremental import is timed.

Targets: full import at least 0.2 of cat's throughput; the incremental
import under 1 s.

    python bench/bench_import.py            # 200 MB
    python bench/bench_import.py --mb 50    # quicker
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

try:
    import orjson

    def dumps(record: dict) -> bytes:
        return orjson.dumps(record)
except ImportError:  # pragma: no cover
    import json

    def dumps(record: dict) -> bytes:
        return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()

from benchlib import drop_page_cache, load_average, median_pair

from dream.config import Settings
from dream.transcripts.claude_code import is_tool_result_line
from dream.transcripts.importer import import_transcripts
from dream.transcripts.synthetic import ClaudeSession

TARGET = 0.2
START = datetime(2026, 6, 1, 9, 0, tzinfo=timezone.utc)
WORDS = ("build", "cache", "index", "merge", "retry", "deploy", "parse", "token", "schema",
         "query", "route", "fixture", "timeout", "render", "queue", "ledger", "webhook")


def output_text(rng: random.Random, size: int) -> str:
    line = " ".join(rng.choice(WORDS) for _ in range(12)) + ' {"ok": true}\n'
    return (line * (size // len(line) + 1))[:size]


def generate_session(path: Path, seed: int, target_bytes: int) -> int:
    """Write one session of about `target_bytes`; return bytes written."""
    rng = random.Random(seed)
    session = ClaudeSession(path.stem, START + timedelta(hours=seed))
    written = 0
    with path.open("wb") as fh:
        while written < target_bytes:
            session.records.clear()
            ask = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30)))
            session.user(f"please {ask}")
            session.assistant(output_text(rng, rng.randint(200, 1500)),
                              thinking=output_text(rng, rng.randint(100, 800)))
            for _ in range(rng.randint(1, 4)):
                kind = rng.choice(("Bash", "Read", "Edit"))
                if kind == "Edit":
                    args = {"file_path": f"/work/app/src/{rng.choice(WORDS)}.py",
                            "old_string": output_text(rng, rng.randint(100, 3000)),
                            "new_string": output_text(rng, rng.randint(100, 3000))}
                elif kind == "Read":
                    args = {"file_path": f"/work/app/src/{rng.choice(WORDS)}.py"}
                else:
                    args = {"command": f"pytest -q -k {rng.choice(WORDS)}", "description": "run tests"}
                tool = session.tool_use(kind, args)
                size = 1_200_000 if rng.random() < 0.01 else int(rng.lognormvariate(8.3, 1.0))
                session.tool_result(tool, output_text(rng, size))
            chunk = b"".join(dumps(r) + b"\n" for r in session.records)
            fh.write(chunk)
            written += len(chunk)
    return written


def generate(folder: Path, total_mb: float) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    total = int(total_mb * 1e6)
    rng = random.Random(7)
    files, written, seed = [], 0, 0
    while written < total:
        size = min(int(rng.lognormvariate(15.0, 0.9)), 40_000_000, total - written)  # median ~3 MB
        path = folder / f"{seed:08d}-0000-4000-8000-{seed:012d}.jsonl"
        written += generate_session(path, seed, max(size, 20_000))
        files.append(path)
        seed += 1
    return files


def median_time(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def tool_result_share(files: list[Path]) -> float:
    total = skipped = 0
    for path in files:
        with path.open("rb") as fh:
            for line in fh:
                total += len(line)
                if is_tool_result_line(line):
                    skipped += len(line)
    return skipped / total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=200, help="megabytes of transcripts (default 200)")
    parser.add_argument("--runs", type=int, default=7, help="timed runs per measurement (median; at least 5)")
    parser.add_argument("--dir", type=Path, default=None, help="work folder (default: a temp folder)")
    parser.add_argument("--cold", action="store_true",
                        help="also measure with the page cache emptied before each run "
                             "(root; empties the whole machine's cache)")
    args = parser.parse_args()
    runs = max(5, args.runs)

    work = args.dir or Path(tempfile.mkdtemp(prefix="dream-bench-import-"))
    project = work / "project"
    try:
        t0 = time.perf_counter()
        files = generate(project, args.mb)
        size = sum(p.stat().st_size for p in files)
        mb = size / 1e6
        print(f"generated {len(files)} sessions, {mb:.0f} MB in {time.perf_counter() - t0:.1f} s")
        print(f"bytes in tool-result records: {tool_result_share(files):.0%}")

        load_before = load_average()
        cat = ["cat", *map(str, files)]
        subprocess.run(cat, stdout=subprocess.DEVNULL, check=True)  # warm the page cache

        def python_read() -> None:  # context: the floor for any Python reader
            for path in files:
                with path.open("rb") as fh:
                    while fh.read(4 << 20):
                        pass

        read_s = median_time(python_read, runs)

        settings = Settings()
        stores: list[Path] = []

        def full_import() -> None:
            store = work / f"store-{len(stores)}"
            if store.exists():
                shutil.rmtree(store)
            store.mkdir()
            stores.append(store)
            result = import_transcripts(store, "claude-code", project, settings)
            assert result.sessions_written == len(files), result

        # cat and import alternate, so that both see the same machine load.
        cat_s, import_s = median_pair(lambda: subprocess.run(cat, stdout=subprocess.DEVNULL, check=True),
                                      full_import, runs)
        store = stores[-1]

        growing = max(files, key=lambda p: p.stat().st_size)
        rounds = iter(range(1000))

        def grow_and_import() -> None:
            session = ClaudeSession(growing.stem, START)
            session.user(f"one more thing, round {next(rounds)}")
            session.assistant("Done.")
            with growing.open("ab") as fh:
                fh.write(b"".join(dumps(r) + b"\n" for r in session.records))
            result = import_transcripts(store, "claude-code", project, settings)
            assert result.sessions_written == 1 and result.sessions_unchanged == len(files) - 1, result

        cold_cat_s = cold_import_s = None
        if args.cold and drop_page_cache():  # the disk-bound case (root only): cache emptied before each run
            cold_cat_s, cold_import_s = median_pair(
                lambda: (drop_page_cache(), subprocess.run(cat, stdout=subprocess.DEVNULL, check=True)),
                lambda: (drop_page_cache(), full_import()), runs)

        grow_s = median_time(grow_and_import, runs)
        noop_s = median_time(lambda: import_transcripts(store, "claude-code", project, settings), runs)

        print(f"\n{'':32} {'seconds':>9} {'MB/s':>9}")
        print(f"{'cat > /dev/null (baseline)':32} {cat_s:9.3f} {mb / cat_s:9.0f}")
        print(f"{'python read(), 4 MB chunks':32} {read_s:9.3f} {mb / read_s:9.0f}")
        print(f"{'full import, fresh store':32} {import_s:9.3f} {mb / import_s:9.0f}")
        ratio = cat_s / import_s
        print(f"\nratio cat time / import time = {ratio:.3f}  (target >= {TARGET}: "
              f"{'met' if ratio >= TARGET else 'NOT met'})")
        if cold_cat_s is not None:
            print(f"cold cache: cat {cold_cat_s:.3f} s, import {cold_import_s:.3f} s, "
                  f"ratio {cold_cat_s / cold_import_s:.3f}")
        else:
            print("cold cache: skipped (needs --cold, and root to empty the page cache)")
        print(f"incremental import after one session grew "
              f"({growing.stat().st_size / 1e6:.0f} MB session): {grow_s:.3f} s  "
              f"(target < 1 s: {'met' if grow_s < 1 else 'NOT met'})")
        print(f"import with nothing changed ({len(files)} transcripts): {noop_s:.3f} s")
        print(f"load average (1, 5, 15 min) before: {load_before}, after: {load_average()}  on {os.cpu_count()} CPUs")
        return 0
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
