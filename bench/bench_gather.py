"""Benchmark: gathering activity logs (scan + read + parse + redact) against `cat`.

Generates realistic logs (many sessions, a few secrets) under a store's
``logs/YYYY/MM/DD/`` tree, then prints, each as the median of --runs runs
(at least 5), the two commands alternating so that both see the same load:

* ``read_sessions(scan_sessions(root))`` vs ``cat <same files> > /dev/null``
  with a warm page cache: seconds and MB/s of each, and the ratio
  cat time / gather time, i.e. gather's throughput relative to cat's
  (target >= 0.2);
* the peak memory (RSS) of one gather in a fresh process, beside that of
  a process that only imports the module;
* with --cold, the same comparison with the page cache emptied before each
  run (root only; it empties the whole machine's cache): the disk-bound case;
* ``scan_sessions(root, since=...)`` with one changed file vs
  ``find logs -newer X`` over the same tree.

    python bench/bench_gather.py            # 200 MB in a temp dir
    python bench/bench_gather.py --mb 50    # quick run
    python bench/bench_gather.py --dir /tmp/logs-bench --keep   # reuse a tree
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchlib import drop_page_cache, load_average, median_pair

from dream.pipeline.gather import read_sessions
from dream.store.sessions import scan_sessions

WORDS = (
    "the a to of and in is it that for on with this we can be file test run "
    "function config error fix update memory store session index model add "
    "check build path value return import module parse line data user agent "
    "should would could because then when where which while also just now "
    "déjà vu 変更 テスト über naïve"
).split()
TOOLS = ["Read", "Edit", "Write", "Bash", "Grep", "Glob", "WebFetch", "TodoWrite"]
SECRETS = [
    "export ANTHROPIC_API_KEY=sk-ant-api03-" + "Xy7_" * 20,
    "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlMTIz",
    "DATABASE_URL=postgres://app:hunter2hunter2@db.internal:5432/app",
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "GITHUB_TOKEN=ghp_" + "a1B2c3D4e5" * 4,
]


def _sentence(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(lo, hi)))


def _entry(rng: random.Random) -> str:
    """One log entry: a user line, an assistant reply (maybe several lines) or a tool call."""
    kind = rng.random()
    if kind < 0.25:
        return "> " + _sentence(rng, 5, 40)
    if kind < 0.55:
        tool = rng.choice(TOOLS)
        return f". {tool} src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py ({rng.randint(1, 900)} lines)"
    lines = ["< " + _sentence(rng, 10, 60)]
    for _ in range(rng.choice((0, 0, 0, 1, 2, 5))):
        lines.append(rng.choice(("", "- ", "  ", "1. ")) + _sentence(rng, 3, 25))
    if rng.random() < 0.01:
        lines.append(rng.choice(SECRETS))
    return "\n".join(lines)


def generate(root: Path, megabytes: int, seed: int = 7) -> int:
    """Write about `megabytes` MB of session logs under root/logs; return bytes written."""
    rng = random.Random(seed)
    # A pool of entries keeps generation fast while text stays varied.
    pool = [_entry(rng) for _ in range(20_000)]
    target = megabytes * 1_000_000
    written = 0
    day0 = dt.date(2025, 1, 1)
    while written < target:
        day = day0 + dt.timedelta(days=rng.randrange(365))
        folder = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        folder.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128))) if rng.random() < 0.5 else f"s{rng.getrandbits(32):08x}"
        slug = "-".join(rng.choices(WORDS[:40], k=3))
        # Session sizes: mostly small, a few large (like real agent sessions).
        n = min(int(rng.paretovariate(1.2) * 60), 20_000)
        text = "\n".join(rng.choices(pool, k=n)) + "\n"
        data = text.encode()
        (folder / f"{sid}-{slug}.md").write_bytes(data)
        written += len(data)
    return written


def _median_seconds(fn, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cat(paths: list[str]) -> None:
    # xargs-style batches keep each argv below the system limit.
    for i in range(0, len(paths), 2000):
        subprocess.run(["cat", *paths[i : i + 2000]], stdout=subprocess.DEVNULL, check=True)


TARGET = 0.2


def bench_throughput(root: Path, runs: int) -> None:
    files = scan_sessions(root)
    paths = [str(f.path) for f in files]
    total_mb = sum(f.size for f in files) / 1e6
    _cat(paths)  # warm the page cache for both
    read_sessions(files)
    print(f"load average (1, 5, 15 min) before the runs: {load_average()}  on {os.cpu_count()} CPUs")
    result = {}

    def gather() -> None:
        result["g"] = read_sessions(scan_sessions(root))

    t_cat, t_gather = median_pair(lambda: _cat(paths), gather, runs)
    g = result["g"]
    print(f"files: {len(files)}, {total_mb:.0f} MB, rows: {g.sessions.height}, redactions: {g.redactions}")
    print(f"cat                    median {t_cat:7.3f} s  {total_mb / t_cat:8.0f} MB/s")
    print(f"scan+read_sessions     median {t_gather:7.3f} s  {total_mb / t_gather:8.0f} MB/s")
    ratio = t_cat / t_gather
    print(f"ratio cat time / gather time: {ratio:.3f}  (target >= {TARGET}: {'met' if ratio >= TARGET else 'NOT met'})")
    print(f"load average (1, 5, 15 min) after the runs: {load_average()}  on {os.cpu_count()} CPUs")


# Peak RSS of a fresh process that runs `code` with the store root as sys.argv[1].
# VmHWM, not ru_maxrss: a child's ru_maxrss starts from its parent's RSS at the fork.
_PEAK = "import sys\n{code}\nprint(open('/proc/self/status').read().split('VmHWM:')[1].split()[0])"


def _peak_rss_mb(code: str, root: Path) -> float:
    done = subprocess.run([sys.executable, "-c", _PEAK.format(code=code), str(root)],
                          capture_output=True, text=True, check=True)
    return int(done.stdout.split()[-1]) / 1024  # kB


def bench_memory(root: Path) -> None:
    load = "from dream.pipeline.gather import read_sessions; from dream.store.sessions import scan_sessions"
    baseline = _peak_rss_mb(load, root)
    peak = _peak_rss_mb(f"{load}\nread_sessions(scan_sessions(sys.argv[1]))", root)
    total_mb = sum(f.size for f in scan_sessions(root)) / 1e6
    print(f"peak RSS of one gather of {total_mb:.0f} MB: {peak:.0f} MB "
          f"(a process that only imports it: {baseline:.0f} MB)")


def bench_cold(root: Path, runs: int) -> None:
    """The same comparison with the page cache emptied before every run of either.

    A nightly dream usually finds yesterday's logs still cached, so the warm
    figure above is the strict one; this one shows the disk-bound case.
    """
    paths = [str(f.path) for f in scan_sessions(root)]
    total_mb = sum(os.path.getsize(p) for p in paths) / 1e6
    if not drop_page_cache():
        print("cold cache: skipped (emptying the page cache needs root)")
        return

    def cold(fn):
        return lambda: (drop_page_cache(), fn())

    t_cat, t_gather = median_pair(cold(lambda: _cat(paths)), cold(lambda: read_sessions(scan_sessions(root))), runs)
    print(f"cold cat               median {t_cat:7.3f} s  {total_mb / t_cat:8.0f} MB/s")
    print(f"cold scan+read_sessions median {t_gather:6.3f} s  {total_mb / t_gather:8.0f} MB/s")
    print(f"ratio cat time / gather time, cold cache: {t_cat / t_gather:.3f}")


def bench_since(root: Path, runs: int) -> None:
    files = scan_sessions(root)
    marker = root / "since-marker"
    marker.write_text("")
    since = marker.stat().st_mtime
    # Make exactly one log newer than the marker.
    changed = files[len(files) // 2].path
    os.utime(changed, (since + 10, since + 10))
    found = scan_sessions(root, since=since)
    assert [f.path for f in found] == [changed], "since filter did not find exactly the changed file"
    cmd = ["find", str(root / "logs"), "-newer", str(marker), "-type", "f"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(changed)], out
    t_scan = _median_seconds(lambda: scan_sessions(root, since=since), runs)
    t_find = _median_seconds(lambda: subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True), runs)
    print(f"scan_sessions(since)   median {t_scan * 1000:7.1f} ms  over {len(files)} files (1 changed)")
    print(f"find -newer            median {t_find * 1000:7.1f} ms  ratio scan/find: {t_scan / t_find:.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=200, help="size of generated logs (default 200)")
    parser.add_argument("--runs", type=int, default=7, help="runs per measurement (median; at least 5)")
    parser.add_argument("--dir", type=Path, help="store folder to use (generated if it has no logs/)")
    parser.add_argument("--keep", action="store_true", help="keep the generated folder")
    parser.add_argument("--cold", action="store_true",
                        help="also measure with the page cache emptied before each run "
                             "(root; empties the whole machine's cache)")
    args = parser.parse_args()
    runs = max(5, args.runs)

    root = args.dir or Path(tempfile.mkdtemp(prefix="dream-bench-gather-"))
    try:
        if not (root / "logs").is_dir():
            start = time.perf_counter()
            size = generate(root, args.mb)
            print(f"generated {size / 1e6:.0f} MB in {time.perf_counter() - start:.1f} s under {root}")
        bench_throughput(root, runs)
        bench_memory(root)
        if args.cold:
            bench_cold(root, runs)
        bench_since(root, runs)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
