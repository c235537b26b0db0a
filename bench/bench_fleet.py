"""Benchmark: the fleet scan (gate checks over many stores) and the cost of running it in Prefect.

Prints, as medians of --runs runs with a warm page cache:

1. seconds per 1,000 stores for the gate alone (`dream.pipeline.fleet.check_store`
   on every store, stores already found) beside a bare
   ``find <root> -newer <file>`` walk over the same tree (target: at most
   2x the walk), plus discovery + gate (`scan_fleet`) for reference;
2. the `dream-nightly` deployment on a real Prefect server with a process
   work pool of one worker (started beforehand and not counted), beside
   `dream run --all` and a plain loop of `dream run --store` on identical
   fleets, at 20 and at 100 due stores: each way's fixed cost per night and
   its cost per dreamed store, as two figures;
3. `dream report --all` over the histories of --stores stores (30 nights
   each), beside a plain Python process reading the same history files with
   `json` and counting runs by status (not dream's own SQL).

    python bench/bench_fleet.py                    # 1,000 stores; Prefect part on 1,000 stores, 100 due
    python bench/bench_fleet.py --stores 5000 --runs 7
    python bench/bench_fleet.py --no-prefect       # gate figures only
    python bench/bench_fleet.py --prefect-only --prefect-runs 3
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
from datetime import datetime
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

sys.path.insert(0, str(REPO / "bench"))
from benchlib import Case, alternate, load_average, median_wall, print_cases, run_process, spread  # noqa: E402

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


def prefect_figures(root: Path, stores: int, dues: list[int], runs: int, shard_size: int, threads: int,
                    loop_runs: int | None = None) -> None:
    """The fleet deployment on a real server with one process worker, beside `dream run --all` and a plain loop.

    For each number of due stores, all three dream identical fresh fleets
    with the offline engine and the same threads per process; a deployment's
    time is from asking to a final state. From the figures at two numbers of
    due stores each way's cost splits into a fixed cost per night and a cost
    per dreamed store (the line through the two medians). The server, pool,
    deployment and worker are started once beforehand and not counted. The
    plain loop, by far the longest, runs `loop_runs` times (default `runs`),
    after the others. Each run's figures are printed as it ends.
    """
    from helpers.prefect_server import WORKER_QUERY_SECONDS, Server

    dream = str(Path(sys.executable).with_name("dream"))

    def fresh(name: str, due: int):
        folder = root / name
        shutil.rmtree(folder, ignore_errors=True)
        return make_fleet(folder, total=stores, due=due)

    def run_all(fleet_root: Path, due: int) -> tuple[float, float]:
        done = run_process([dream, "run", "--all", "--root", str(fleet_root), "--engine", "offline",
                            "--max-concurrency", str(threads), "--json"])
        assert done.stdout.count('"status": "proposed"') == due, done.stdout[-2000:]
        return done.wall, done.cpu

    def plain_loop(due_stores: list[Path]) -> tuple[float, float]:
        """What a cron line without dream's fleet support does: one `dream run --store` process after another."""
        done = [run_process([dream, "run", "--store", str(s), "--engine", "offline", "--json"]) for s in due_stores]
        assert all('"status": "proposed"' in d.stdout for d in done)
        return sum(d.wall for d in done), sum(d.cpu for d in done)

    def deployment(fleet_root: Path, due: int) -> float:
        start = time.perf_counter()
        run_id = server.run_deployment("dream-nightly", {"roots": [str(fleet_root)], "engine": "offline",
                                                         "shard_size": shard_size, "max_concurrency": threads})
        run = server.wait_until_done(run_id, timeout=3600, poll=0.2)  # the end seen within 0.2 s, as a process's exit
        elapsed = time.perf_counter() - start
        assert run["state"]["type"] == "COMPLETED", run["state"]
        assert run["state"]["message"].startswith(f"{due} proposed, "), run["state"]["message"]
        return elapsed

    home = root / "prefect-home"
    home.mkdir(parents=True)
    server = Server(home)
    worker = None
    walls: dict[tuple[str, int], list[float]] = {}
    cpus: dict[tuple[str, int], list[float]] = {}
    try:
        server.cli("work-pool", "create", "dream", "--type", "process")
        server.cli("deploy", "--all")
        worker = server.start_worker()  # one worker, as docs/prefect.md describes
        server.wait_for_worker("dream", timeout=300)
        deployment(make_fleet(root / "warmup", total=10, due=2).root, 2)  # the worker's imports, the server's warm-up
        def keep(way: str, due: int, i: int, wall: float, cpu: float) -> None:
            walls.setdefault((way, due), []).append(wall)
            cpus.setdefault((way, due), []).append(cpu)
            print(f"  run {i + 1}: {way:28} {due:4d} due: wall {wall:8.2f} s, CPU {cpu:7.2f} s "
                  f"(load average {load_average()})", flush=True)

        for i in range(runs):
            for due in dues:
                keep("dream run --all", due, i, *run_all(fresh(f"cli-{due}-{i}", due).root, due))
                deployed = deployment(fresh(f"pf-{due}-{i}", due).root, due)
                keep("dream-nightly deployment", due, i, deployed, float("nan"))
        for i in range(runs if loop_runs is None else loop_runs):
            for due in dues:
                keep("loop of dream run --store", due, i, *plain_loop(fresh(f"loop-{due}-{i}", due).due))
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:  # still shutting down a flow run's process: the figures are taken
                worker.kill()
                worker.wait()
        server.stop()
    print(f"prefect: {stores} stores, {' and '.join(map(str, dues))} due (offline engine), real server, process pool "
          f"with one worker (PREFECT_WORKER_QUERY_SECONDS={WORKER_QUERY_SECONDS:g}), shards of {shard_size}, "
          f"{threads} thread(s) per process; wall seconds, median (min-max) of the runs above; CPU of the CLI's "
          "own processes (the deployment's runs in the worker's children: not counted)")
    low, high = min(dues), max(dues)
    for way in ("dream run --all", "loop of dream run --store", "dream-nightly deployment"):
        for due in dues:
            cpu = statistics.median(cpus[way, due])
            cpu_text = "" if cpu != cpu else f"  CPU {cpu:.2f} s"
            print(f"  {way:28} {due:4d} due: {spread(walls[way, due])}{cpu_text}")
        per_store = (statistics.median(walls[way, high]) - statistics.median(walls[way, low])) / (high - low)
        fixed = statistics.median(walls[way, low]) - low * per_store
        print(f"  {way:28} fixed cost per night {fixed:6.2f} s, per dreamed store {per_store:6.3f} s")


def run_phases(fleet_run: dict, shard_runs: list[dict]) -> dict[str, float]:
    """A fleet run's time cut where the server saw its flow runs change state."""
    def at(run: dict, field: str) -> float:
        return datetime.fromisoformat(run[field]).timestamp()

    first_created, last_created = min(at(s, "created") for s in shard_runs), max(at(s, "created") for s in shard_runs)
    first_start, last_end = min(at(s, "start_time") for s in shard_runs), max(at(s, "end_time") for s in shard_runs)
    return {
        "fleet run picked up, its process started": at(fleet_run, "start_time") - at(fleet_run, "created"),
        "scan, then the shard runs created": last_created - at(fleet_run, "start_time"),
        "shards picked up, their processes started": statistics.median(
            at(s, "start_time") - at(s, "created") for s in shard_runs),
        "first shard start to last shard end": last_end - first_start,
        "last shard end to the fleet run's end": at(fleet_run, "end_time") - last_end,
        "(shard runs created over)": last_created - first_created,
    }


PLAIN_PYTHON = """import json, sys
from pathlib import Path
# The report's totals by hand: read every store's history.jsonl line by line, count runs by status, add up cost.
stores, runs, cost = 0, {}, 0.0
for history in Path(sys.argv[1]).glob("*/memory/.dream/history.jsonl"):
    stores += 1
    for line in history.open("rb"):
        record = json.loads(line)
        status = record.get("status")
        if status:
            runs[status] = runs.get(status, 0) + 1
            cost += (record.get("usage") or {}).get("cost_usd") or 0.0
print(stores, sum(runs.values()))
"""


def report_figures(root: Path, stores: int, nights: int, runs: int) -> None:
    """`dream report --all` over `stores` histories, beside the same SQL run by DuckDB in a bare Python process."""
    from dream import history
    from dream.outcomes import RunOutcome, Status, Usage
    from dream.store.layout import Layout

    seed = Layout(root / "seed")
    seed.dream.mkdir(parents=True)
    start = time.time() - nights * 86400
    for night in range(nights):  # a month of nights: proposals, skips, a failure, and some reviews
        status = [Status.PROPOSED, Status.SKIPPED, Status.NOOP, Status.FAILED][night % 4]
        proposal = f"p{night}" if status == Status.PROPOSED else None
        outcome = RunOutcome(status=status, engine="claude", run_id=f"r{night}", proposal_id=proposal, changes=3,
                             duration_s=12.5, lines_removed=7,
                             usage=Usage(input_tokens=40_000, output_tokens=3_000, cost_usd=0.17))
        history.record_run(seed, outcome, start + night * 86400)
        if proposal and night % 8 == 0:
            history.record_event(seed, "accept", proposal, night)
    for i in range(stores):
        store = root / "fleet" / f"-home-dev-project-{i:04d}" / "memory"
        (store / ".dream").mkdir(parents=True)
        (store / "MEMORY.md").write_text("# Memory\n")
        shutil.copyfile(seed.history, store / ".dream" / "history.jsonl")
    dream_report = [str(Path(sys.executable).with_name("dream")), "report", "--root", str(root / "fleet")]
    (root / "plain.py").write_text(PLAIN_PYTHON)
    cases = alternate([
        Case("dream report --all --json", lambda: [*dream_report, "--json"]),
        Case("plain python + json, the same files", lambda: [sys.executable, str(root / "plain.py"),
                                                              str(root / "fleet")]),
    ], runs)
    assert f'"total": {{"stores": {stores},' in cases[0].runs[0].stdout, cases[0].runs[0].stdout[-300:]
    assert cases[1].runs[0].stdout.split()[0] == str(stores), cases[1].runs[0].stdout
    lines = stores * len(seed.history.read_bytes().splitlines())
    print_cases(cases, f"report: {stores} stores, {lines:,} history lines")
    print(f"  ratio dream / plain python (wall): {median_wall(cases[0]) / median_wall(cases[1]):.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=1000, help="stores in the gate fleet (default 1000)")
    parser.add_argument("--due", type=int, default=10, help="due stores among them (default 10)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--prefect-stores", type=int, default=1000)
    parser.add_argument("--prefect-due", type=int, nargs="+", default=[20, 100],
                        help="due stores, at least two numbers: fixed cost and cost per store (default 20 100)")
    parser.add_argument("--prefect-runs", type=int, default=1, help="runs of the Prefect part (each ~minutes)")
    parser.add_argument("--loop-runs", type=int, help="runs of the plain loop (default: --prefect-runs); the longest")
    parser.add_argument("--shard-size", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2, help="threads per shard, and for dream run --all")
    parser.add_argument("--no-prefect", action="store_true", help="skip the Prefect overhead figures")
    parser.add_argument("--report-only", action="store_true", help="only the dream report figures")
    parser.add_argument("--prefect-only", action="store_true", help="only the Prefect fleet figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        if args.prefect_only:
            prefect_figures(Path(tmp) / "prefect", args.prefect_stores, args.prefect_due, args.prefect_runs,
                            args.shard_size, args.threads, args.loop_runs)
            return
        report_figures(Path(tmp) / "report", args.stores, 30, args.runs)
        if args.report_only:
            return
        gate_figures(Path(tmp) / "gate", args.stores, args.due, args.runs)
        if not args.no_prefect:
            prefect_figures(Path(tmp) / "prefect", args.prefect_stores, args.prefect_due, args.prefect_runs,
                            args.shard_size, args.threads, args.loop_runs)


if __name__ == "__main__":
    main()
