"""Offline engine speed and memory: store size, requests, long logs, a whole run.

Parts (each measurement runs in its own child process, so peak RSS is its own):

* ``store``: generated stores of 5,000 / 10,000 / 20,000 memories and no logs;
  whole ``dream run --force`` processes (start-up, snapshot, staging,
  engine, validate, propose), three runs each on fresh copies, medians with
  min-max; growth per doubling in CPU.
* ``requests``: 60 requests (remember, repeats, rules, forget, corrections)
  on 2,000 topics, then 2x and 4x of both; engine only, medians of three.
  Linear growth is a ratio of 2.0 per doubling; quadratic would be 4.0.
* ``remember``: one log with 2,000 and with 50,000 "remember ..." lines (a
  third of them repeats) on a 50-topic store, end to end through
  ``dream.pipeline.run.run``, with the time split by stage.
* ``run``: a 20,000-topic store with 200 MB of logs, a whole ``dream run``
  process: CPU, system time, wall and peak RSS.

The baseline of ``store`` and ``run``, alternating with the dream in the same
run, is a bare Python process reading and hashing every file of the store:
the least any consolidation must do. ``requests`` and ``remember`` still time
the engine in-process (they measure how request handling grows).

    python bench/bench_offline.py                       # every part
    python bench/bench_offline.py store 5000 10000
    python bench/bench_offline.py requests --requests 60 --topics 2000
    python bench/bench_offline.py remember 2000 50000
    python bench/bench_offline.py run --topics 20000 --mb 200
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
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

from benchlib import Case, alternate, load_average, median_cpu, median_wall, print_cases

SYLLABLES = "ka lo mi ne ru sa te vi do pe ga fu zi bo ha ly".split()
# A Zipf-like vocabulary, as in real notes: a few very common words
# ("the", "and", "use") and a long tail of rare names, paths and terms.
VOCABULARY = ["the", "and", "use", "for", "not", "run", "with", "when", "test", "deploy"] + [
    a + b + c for a in SYLLABLES for b in SYLLABLES for c in SYLLABLES][:6000]
WEIGHTS = [1 / (rank + 1) for rank in range(len(VOCABULARY))]
WORDS = VOCABULARY[:40]
TYPES = ("user", "feedback", "project", "reference")
REPEATS = 3
LOG_DAY = date(2026, 11, 30)


# ---------------------------------------------------------------- generated data


def make_store(root: Path, count: int, seed: int = 7, indexed: int | None = None) -> list[tuple[str, str]]:
    """`count` topic files, 5% of them near-duplicates of another; the first `indexed` (all) indexed.

    Returns (name, ref) per topic: what requests can name to forget or correct it.
    """
    rng = random.Random(seed)
    index = ["# Memory index", ""]
    bodies: list[str] = []
    facts: list[tuple[str, str]] = []
    for i in range(count):
        ref = f"{rng.getrandbits(40):x}"
        if bodies and rng.random() < 0.05:
            body = rng.choice(bodies) + " Also noted."
        else:
            words = rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(25, 60))
            body = f"Fact {i}: " + " ".join(words) + f" (ref {ref})."
            if rng.random() < 0.1:
                body += " It broke yesterday."
        bodies.append(body)
        name = f"mem_{i:05d}"
        facts.append((name, ref))
        type_ = TYPES[i % 4]
        text = (f"---\nname: {name}\ndescription: note {i} about {rng.choice(WORDS)}\n"
                f"type: {type_}\ncreated: 2026-0{1 + i % 9}-1{i % 10}\n---\n\n{body}\n")
        (root / f"{name}.md").write_text(text)
        hook = rng.choice(WORDS)
        if indexed is None or i < indexed:
            index.append(f"- [{name}]({name}.md) — note {i} about {hook}")
    (root / "MEMORY.md").write_text("\n".join(index) + "\n")
    return facts


def _phrase(rng: random.Random, k: int) -> str:
    return " ".join(rng.choices(VOCABULARY, WEIGHTS, k=k))


class RequestMaker:
    """User lines that are requests, cycling through six kinds.

    New facts, exact repeats of earlier ones (already covered), rules, a
    forget that names a topic, a forget that matches nothing, and a
    correction of a topic's ref ("…, not <old ref>").
    """

    def __init__(self, facts: list[tuple[str, str]], seed: int = 11):
        self.facts, self.rng, self.said, self.made = facts, random.Random(seed), [], 0

    def next(self) -> str:
        rng, n = self.rng, self.made
        self.made += 1
        kind = n % 6
        if kind == 0 or (kind == 1 and not self.said):
            line = f"Remember that the {_phrase(rng, 3)} service listens on port {1000 + n}."
            self.said.append(line)
            return line
        if kind == 1:
            return rng.choice(self.said)
        if kind == 2:
            return f"Never run {_phrase(rng, 2)} against the {_phrase(rng, 1)} cluster {n}."
        if kind == 3:
            return f"Forget about {rng.choice(self.facts)[0]}."
        if kind == 4:
            return f"Forget the {_phrase(rng, 2)} dashboard."
        i = rng.randrange(len(self.facts))
        return f"Actually, fact {i} has ref {rng.getrandbits(40):x}, not {self.facts[i][1]}."


def make_requests(facts: list[tuple[str, str]], count: int) -> list[str]:
    maker = RequestMaker(facts)
    return [maker.next() for _ in range(count)]


def remember_lines(count: int, seed: int = 13) -> list[str]:
    """`count` "remember …" user lines; about a third repeat an earlier one word for word."""
    rng = random.Random(seed)
    said: list[str] = []
    for n in range(count):
        if said and rng.random() < 0.33:
            said.append(rng.choice(said))
            continue
        said.append(f"remember that the {_phrase(rng, 2)} job for {_phrase(rng, 1)} runs at "
                    f"{n % 24:02d}:{n % 60:02d} on host h{n:06d}")
    return said


def write_log(root: Path, session: str, lines: list[str], day: date = LOG_DAY) -> None:
    folder = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{session}-bench.md").write_text("\n".join(lines) + "\n")


def _chatter(rng: random.Random) -> str:
    """One log entry that asks for nothing: a user line, a reply or a tool call."""
    kind = rng.random()
    if kind < 0.25:
        return "> " + " ".join(rng.choices(WORDS, k=rng.randint(5, 40)))
    if kind < 0.55:
        return f". Read src/{rng.choice(WORDS)}/{rng.choice(VOCABULARY)}.py ({rng.randint(1, 900)} lines)"
    reply = "< " + " ".join(rng.choices(VOCABULARY, WEIGHTS, k=rng.randint(10, 60)))
    extra = ["- " + _phrase(rng, rng.randint(3, 25)) for _ in range(rng.choice((0, 0, 1, 3)))]
    return "\n".join([reply, *extra])


def make_logs(root: Path, megabytes: int, facts: list[tuple[str, str]], seed: int = 5) -> int:
    """About `megabytes` MB of session logs; sessions hold 0-2 requests each. Returns the request count."""
    rng = random.Random(seed)
    pool = [_chatter(rng) for _ in range(20_000)]
    maker = RequestMaker(facts, seed)
    written, sessions = 0, 0
    while written < megabytes * 1_000_000:
        size = min(int(rng.paretovariate(1.2) * 60), 20_000)
        entries = rng.choices(pool, k=size)
        for _ in range(rng.choice((0, 0, 1, 1, 2))):
            entries.insert(rng.randrange(len(entries) + 1), "> " + maker.next())
        day = date(2026, 1 + sessions % 11, 1 + sessions % 28)
        text = "\n".join(entries) + "\n"
        write_log(root, f"s{sessions:07d}", [text[:-1]], day)
        written += len(text.encode())
        sessions += 1
    return maker.made


def baseline(root: Path) -> float:
    start = time.perf_counter()
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.md")):
        digest.update(path.read_bytes())
    return time.perf_counter() - start


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---------------------------------------------------------------- children


def _sessions(lines: list[str]):
    import polars as pl

    days = [LOG_DAY] * len(lines)
    return pl.DataFrame({"session": [f"s{n // 10:05d}" for n in range(len(lines))], "date": days,
                         "seq": list(range(len(lines))), "role": ["user"] * len(lines), "text": lines},
                        schema={"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64,
                                "role": pl.Utf8, "text": pl.Utf8})


def engine_runs(count: int, requests: int) -> dict:
    """Generate a store (and requests), then time baseline and engine runs on fresh copies."""
    from dream.config import Settings
    from dream.engines.base import EngineInput
    from dream.store.staging import Staging
    from dream.engines.offline import OfflineEngine, consolidate

    applying = consolidate.apply_requests
    request_cpu: list[float] = []

    def timed_apply(*args):
        start = time.process_time()
        try:
            return applying(*args)
        finally:
            request_cpu.append(time.process_time() - start)

    consolidate.apply_requests = timed_apply
    engine_times, cpu_times, base_times, changes = [], [], [], 0
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        facts = make_store(source, count)
        rows = _sessions(make_requests(facts, requests))
        for run in range(REPEATS):
            staging = Path(tmp) / f"staging{run}"
            shutil.copytree(source, staging)
            base_times.append(baseline(staging))
            inp = EngineInput(staging, Staging(staging), rows, [], Settings(), date(2026, 12, 1))
            start, cpu = time.perf_counter(), time.process_time()
            result = OfflineEngine().consolidate(inp)
            engine_times.append(time.perf_counter() - start)
            cpu_times.append(time.process_time() - cpu)
            changes = len(result.changes)
    return {"memories": count, "requests": requests, "engine_s": statistics.median(engine_times),
            "cpu_s": statistics.median(cpu_times), "requests_cpu_s": statistics.median(request_cpu),
            "baseline_s": statistics.median(base_times), "peak_rss_mb": peak_rss_mb(), "changes": changes}


class StageTimer:
    """Wraps the run's stages (and the engine inside `consolidate`) to add up their seconds."""

    STAGES = ("snapshot", "gather", "consolidate", "validate", "propose")

    def __init__(self):
        from dream.engines.offline import OfflineEngine
        from dream.pipeline import run as pipeline

        self.wall = {name: 0.0 for name in (*self.STAGES, "engine")}
        self.cpu = dict(self.wall)
        for name in self.STAGES:
            setattr(pipeline, name, self._timed(name, getattr(pipeline, name)))
        OfflineEngine.consolidate = self._timed("engine", OfflineEngine.consolidate)

    def _timed(self, name, fn):
        def wrapper(*args, **kwargs):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.wall[name] += time.perf_counter() - start
                self.cpu[name] += time.process_time() - cpu
        return wrapper

    def split(self, total: tuple[float, float]) -> dict[str, tuple[float, float]]:
        """(wall, cpu) seconds per stage; the engine taken out of `consolidate`."""
        out = {}
        for name in ("snapshot", "gather", "engine", "consolidate", "validate", "propose"):
            out[name] = (self.wall[name], self.cpu[name])
        out["consolidate"] = (self.wall["consolidate"] - self.wall["engine"],
                              self.cpu["consolidate"] - self.cpu["engine"])
        out["staged tree"] = out.pop("consolidate")  # reading back what the engine wrote
        out["other"] = (total[0] - sum(w for w, _ in out.values()), total[1] - sum(c for _, c in out.values()))
        return out


def pipeline_run(store: Path) -> dict:
    """One `run(store, engine="offline", force=True)`, with the seconds of each stage."""
    from dream.pipeline.run import run

    timer = StageTimer()
    start, cpu = time.perf_counter(), time.process_time()
    outcome = run(store, engine="offline", force=True)
    total = (time.perf_counter() - start, time.process_time() - cpu)
    return {"total_s": total[0], "cpu_s": total[1], "status": str(outcome.status), "changes": outcome.changes,
            "error": outcome.error, "split": timer.split(total)}


def remember_run(lines: int) -> dict:
    """One log with `lines` "remember …" lines (each answered) on a 50-topic store, end to end."""
    runs, base_times = [], []
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        source.mkdir()
        make_store(source, 50)
        log = []
        for said in remember_lines(lines):
            log += [f"> {said}", "< Noted."]
        write_log(source, "s-remember", log)
        for n in range(REPEATS if lines <= 10_000 else 1):
            store = Path(tmp) / f"store{n}"
            shutil.copytree(source, store)
            base_times.append(baseline(store))
            runs.append(pipeline_run(store))
    best = sorted(runs, key=lambda r: r["total_s"])[len(runs) // 2]
    return {"lines": lines, "runs": len(runs), "baseline_s": statistics.median(base_times),
            "peak_rss_mb": peak_rss_mb(), **best}


def generate_big(folder: Path, topics: int, megabytes: int, indexed: int | None = None) -> dict:
    folder.mkdir(parents=True)
    # Every topic indexed (1.1 MB of index at 20,000): the index budget shrinks it. Before the index had only
    # its budget, dream refused a memory file over 1 MB and 15,000 index lines (the rest orphans) was the most.
    facts = make_store(folder, topics, indexed=indexed)
    requests = make_logs(folder, megabytes, facts)
    return {"requests": requests}


def big_run(folder: Path) -> dict:
    base = baseline(folder)
    result = pipeline_run(folder)
    return {"baseline_s": base, "peak_rss_mb": peak_rss_mb(), **result}


CHILDREN = {
    "engine": lambda a: engine_runs(int(a[0]), int(a[1])),
    "remember": lambda a: remember_run(int(a[0])),
    "generate": lambda a: generate_big(Path(a[0]), int(a[1]), int(a[2]), int(a[3]) if len(a) > 3 else None),
    "big": lambda a: big_run(Path(a[0])),
}


def child(kind: str, *args: object) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", kind, *map(str, args)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------- parts


def _ratio(row: dict, previous: dict | None, key: str) -> str:
    return f"{row[key] / previous[key]:.2f}" if previous and previous[key] > 0 else "-"


def dream_run_case(name: str, source: Path, work: Path) -> Case:
    """`dream run --engine offline --force` as a user starts it, each run on a fresh copy made before the clock."""
    dream = str(Path(sys.executable).with_name("dream"))
    copies = iter(range(10_000))

    def fresh() -> list[str]:
        store = work / f"{source.name}-{next(copies)}"
        shutil.copytree(source, store, symlinks=True)  # a run leaves .dream/ behind: keep the source clean
        return [dream, "run", "--store", str(store), "--engine", "offline", "--force", "--json"]

    return Case(name, fresh)


def read_hash_case(source: Path) -> Case:
    """The baseline: a bare Python process reading and hashing every file of the store, the least a dream does."""
    return Case("python read+hash of the same files", lambda: [sys.executable, "-c", READ_HASH, str(source)])


READ_HASH = ("import hashlib, sys\nfrom pathlib import Path\nd = hashlib.sha256()\n"
             "for p in sorted(Path(sys.argv[1]).rglob('*.md')):\n    d.update(p.read_bytes())")


def part_store(sizes: list[int], runs: int) -> None:
    """Whole `dream run` processes on stores of growing size (no logs, --force): what a user waits for."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-offline-") as tmp:
        for size in sizes:
            source = Path(tmp) / f"s{size}"
            child("generate", source, size, 0)
            cases = alternate([read_hash_case(source), dream_run_case(f"dream run, {size} memories", source,
                                                                      Path(tmp))], runs, warmup=0)
            print_cases(cases, f"{size} memories, no logs")
            rows.append((size, median_cpu(cases[1]), median_wall(cases[1]), median_cpu(cases[0])))
            for folder in Path(tmp).glob(f"s{size}-*"):
                shutil.rmtree(folder)
    print(f"{'memories':>9} {'dream CPU s':>12} {'wall s':>8} {'read+hash CPU s':>16} {'CPU ratio':>10} "
          f"{'read+hash ratio':>16}")
    previous = None
    for size, cpu, wall, base in rows:
        ratio = f"{cpu / previous[1]:.2f}" if previous and previous[0] * 2 == size else "-"
        base_ratio = f"{base / previous[3]:.2f}" if previous and previous[0] * 2 == size else "-"
        print(f"{size:>9} {cpu:>12.2f} {wall:>8.2f} {base:>16.3f} {ratio:>10} {base_ratio:>16}")
        previous = (size, cpu, wall, base)
    print("(ratios against the size half as big: 2.0 = linear, 4.0 = quadratic)")


def part_requests(requests: int, topics: int, doublings: int) -> None:
    print(f"load average before: {load_average()} on {os.cpu_count()} CPUs")
    rows = [child("engine", topics << k, requests << k) for k in range(doublings + 1)]
    print(f"{'requests':>9} {'topics':>7} {'engine s':>9} {'cpu s':>7} {'requests cpu s':>15} "
          f"{'read+hash s':>12} {'peak RSS MB':>12} {'changes':>8} {'cpu ratio':>10} "
          f"{'requests ratio':>15} {'linear':>7}")
    previous = None
    for r in rows:
        print(f"{r['requests']:>9} {r['memories']:>7} {r['engine_s']:>9.3f} {r['cpu_s']:>7.3f} "
              f"{r['requests_cpu_s']:>15.3f} {r['baseline_s']:>12.4f} {r['peak_rss_mb']:>12.0f} "
              f"{r['changes']:>8} {_ratio(r, previous, 'cpu_s'):>10} "
              f"{_ratio(r, previous, 'requests_cpu_s'):>15} {'2.00' if previous else '-':>7}")
        previous = r
    print(f"(median of {REPEATS} runs; requests and topics double together, so linear time is a "
          "ratio of 2 per row and request-by-memory work 4. 'requests cpu s' is the CPU time of "
          "apply_requests alone; the rest of the engine (duplicates, dates, prune) is the store part.)")
    print(f"load average after: {load_average()}")


def _split(split: dict) -> str:
    return ", ".join(f"{name} {wall:.2f}/{cpu:.2f}" for name, (wall, cpu) in split.items())


def part_remember(counts: list[int]) -> None:
    print(f"load average before: {load_average()} on {os.cpu_count()} CPUs")
    for count in counts:
        r = child("remember", count)
        print(f"{r['lines']:>7} remember lines: run {r['total_s']:.2f} s, cpu {r['cpu_s']:.2f} s ({r['status']}, "
              f"{r['changes']} changes; median of {r['runs']}), read+hash {r['baseline_s']:.4f} s, "
              f"peak RSS {r['peak_rss_mb']:.0f} MB")
        print(f"        split (wall/cpu s): {_split(r['split'])}")


def part_run(topics: int, megabytes: int, keep: Path | None, runs: int) -> None:
    """The big night as a whole `dream run` process: CPU, system time, wall and peak RSS, beside read+hash."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-offline-"))
    source = keep or tmp / "source"
    try:
        if not source.exists():
            start = time.perf_counter()
            made = child("generate", source, topics, megabytes)
            print(f"generated {topics} topics + {megabytes} MB of logs ({made['requests']} requests) "
                  f"in {time.perf_counter() - start:.0f} s")
        cases = alternate([read_hash_case(source), dream_run_case("dream run", source, tmp)], runs, warmup=0)
        print_cases(cases, f"{topics} topics + {megabytes} MB logs")
        outcome = json.loads(cases[1].runs[-1].stdout)
        print(f"  {outcome.get('status')}, {outcome.get('changes')} changes; targets: <= 32 s CPU, <= 1 GB peak, "
              "<= 5 s system time")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", nargs="?", choices=("store", "requests", "remember", "run", "all"), default="all")
    parser.add_argument("sizes", nargs="*", type=int, help="memories (store) or lines (remember)")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--topics", type=int, help="topics (requests: 2000, run: 20000)")
    parser.add_argument("--doublings", type=int, default=2)
    parser.add_argument("--mb", type=int, default=200, help="MB of logs for the run part")
    parser.add_argument("--runs", type=int, default=3, help="store and run parts: runs of each command")
    parser.add_argument("--keep", type=Path, help="run part: generate into (or reuse) this folder; runs on a copy")
    args = parser.parse_args(argv)
    if args.part in ("store", "all"):
        part_store(args.sizes if args.part == "store" and args.sizes else [5000, 10000, 20000], args.runs)
    if args.part in ("requests", "all"):
        part_requests(args.requests, args.topics or 2000, args.doublings)
    if args.part in ("remember", "all"):
        part_remember(args.sizes if args.part == "remember" and args.sizes else [2000, 50000])
    if args.part in ("run", "all"):
        part_run(args.topics or 20000, args.mb, args.keep, args.runs)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "--child":
        print(json.dumps(CHILDREN[sys.argv[2]](sys.argv[3:])))
    else:
        main(sys.argv[1:])
