"""Benchmark: the fleet scan (gate checks over many stores) and the cost of running it in Prefect.

Prints, as medians of --runs runs with a warm page cache:

1. seconds per 1,000 stores for the gate alone (`dream.pipeline.fleet.check_store`
   on every store, stores already found) beside a bare
   ``find <root> -newer <file>`` walk over the same tree (target: at most
   2x the walk), plus discovery + gate (`scan_fleet`) for reference;
2. a small fleet dreamed by the `dream_fleet` Prefect flow (temporary
   server from `prefect_test_harness`, started beforehand and not counted)
   against the library called directly on an identical fleet
   (`scan_fleet`, then `pipeline.run` on each due store).

    python bench/bench_fleet.py                    # 1,000 stores; Prefect part on 20 stores, 3 due
    python bench/bench_fleet.py --stores 5000 --runs 7
    python bench/bench_fleet.py --no-prefect       # gate figures only
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The repository first: tests/ holds a test package named `flows` too.
sys.path[:0] = [str(REPO), str(REPO / "tests")]

# Prefect must never touch the user's ~/.prefect, and dream never their config.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="bench-fleet-prefect-")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["PREFECT_LOGGING_LEVEL"] = "ERROR"
os.environ.pop("PREFECT_API_URL", None)
os.environ["DREAM_CONFIG"] = os.path.join(os.environ["PREFECT_HOME"], "no-config.toml")
os.environ.pop("ANTHROPIC_API_KEY", None)

from helpers.fleet_factory import make_fleet  # noqa: E402

from dream.pipeline import run as pipeline  # noqa: E402
from dream.pipeline.fleet import check_store, scan_fleet  # noqa: E402
from dream.transcripts.discover import discover_stores  # noqa: E402


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of(runs: int, fn) -> float:
    return statistics.median(timed(fn) for _ in range(runs))


def gate_figures(root: Path, stores: int, due: int, runs: int) -> None:
    fleet = make_fleet(root, total=stores, due=due)
    found = discover_stores([fleet.root])
    assert len(found) == stores, f"found {len(found)} of {stores} stores"
    marker = root / "marker"
    marker.write_text("")
    files = sum(len(f) for _, _, f in os.walk(fleet.root))

    def gates():
        entries = [check_store(s) for s in found]
        assert sum(e.due for e in entries) == due

    def walk():
        subprocess.run(["find", str(fleet.root), "-newer", str(marker)], check=True, stdout=subprocess.DEVNULL)

    gates(); walk()  # warm the page cache
    per_k = 1000 / stores
    t_gate, t_walk = median_of(runs, gates), median_of(runs, walk)
    t_scan = median_of(runs, lambda: scan_fleet([fleet.root]))
    print(f"fleet: {stores} stores ({due} due), {files} files, median of {runs} runs")
    print(f"  gate alone (check_store x {stores}):      {t_gate * per_k:7.3f} s / 1,000 stores")
    print(f"  find <root> -newer <file> (baseline):     {t_walk * per_k:7.3f} s / 1,000 stores")
    print(f"  ratio gate / find:                        {t_gate / t_walk:7.2f}x  (target <= 2x)")
    print(f"  discovery + gate (scan_fleet):            {t_scan * per_k:7.3f} s / 1,000 stores")


def prefect_figures(root: Path, stores: int, due: int, runs: int) -> None:
    from prefect.testing.utilities import prefect_test_harness

    from flows.dream_fleet import dream_fleet

    def fresh(name: str) -> Path:
        folder = root / name
        shutil.rmtree(folder, ignore_errors=True)
        return make_fleet(folder, total=stores, due=due).root

    def direct(fleet_root: Path) -> None:
        outcomes = [pipeline.run(e.store, engine="offline") for e in scan_fleet([fleet_root]) if e.due]
        assert [o.status for o in outcomes] == ["proposed"] * due

    def in_prefect(fleet_root: Path) -> None:
        rows = dream_fleet([str(fleet_root)], engine="offline", max_concurrency=1)
        assert sum(r["status"] == "proposed" for r in rows) == due

    lib, pf = [], []
    with prefect_test_harness(server_startup_timeout=120):
        in_prefect(fresh("warmup"))  # first flow run pays for client and server warm-up
        for i in range(runs):
            a, b = fresh(f"lib-{i}"), fresh(f"prefect-{i}")
            lib.append(timed(lambda: direct(a)))
            pf.append(timed(lambda: in_prefect(b)))
    t_lib, t_pf = statistics.median(lib), statistics.median(pf)
    print(f"prefect: {stores} stores ({due} due, offline engine, one at a time), median of {runs} runs")
    print(f"  library directly (scan_fleet + run):      {t_lib:7.2f} s")
    print(f"  dream_fleet flow (test harness server):   {t_pf:7.2f} s")
    print(f"  overhead:                                 {t_pf - t_lib:+7.2f} s  ({t_pf / t_lib:.1f}x), "
          f"{(t_pf - t_lib) / max(due, 1):.2f} s per dreamed store")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=1000, help="stores in the gate fleet (default 1000)")
    parser.add_argument("--due", type=int, default=10, help="due stores among them (default 10)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--prefect-stores", type=int, default=20)
    parser.add_argument("--prefect-due", type=int, default=3)
    parser.add_argument("--no-prefect", action="store_true", help="skip the Prefect overhead figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        gate_figures(Path(tmp) / "gate", args.stores, args.due, args.runs)
        if not args.no_prefect:
            prefect_figures(Path(tmp) / "prefect", args.prefect_stores, args.prefect_due, max(1, args.runs // 2))


if __name__ == "__main__":
    main()
