"""Benchmark: the fleet scan (gate checks over many stores) and the cost of running it in Prefect.

Prints, as medians of --runs runs with a warm page cache:

1. seconds per 1,000 stores for the gate alone (`dream.pipeline.fleet.check_store`
   on every store, stores already found) beside a bare
   ``find <root> -newer <file>`` walk over the same tree (target: at most
   2x the walk), plus discovery + gate (`scan_fleet`) for reference;
2. the `dream-nightly` deployment on a real Prefect server with a process
   work pool of two workers (started beforehand and not counted), against
   `dream run --all` on an identical fleet: seconds per dreamed store;
3. `dream report --all` over the histories of --stores stores (30 nights
   each), beside the same SQL run by DuckDB in a bare Python process.

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


def prefect_figures(root: Path, stores: int, due: int, runs: int, shard_size: int, threads: int) -> None:
    """The fleet deployment on a real server with two process workers, beside `dream run --all` on the same stores.

    Both dream identical fresh fleets with the offline engine and the same
    number of threads per process; the time is from asking to a final
    state, per dreamed store. The server, pool, deployments and workers are
    started once beforehand and not counted.
    """
    from helpers.prefect_server import WORKER_QUERY_SECONDS, Server

    def fresh(name: str) -> Path:
        folder = root / name
        shutil.rmtree(folder, ignore_errors=True)
        return make_fleet(folder, total=stores, due=due).root

    def run_all(fleet_root: Path) -> None:
        proc = subprocess.run([str(Path(sys.executable).with_name("dream")), "run", "--all", "--root", str(fleet_root),
                               "--engine", "offline", "--max-concurrency", str(threads), "--json"],
                              capture_output=True, text=True, env=server.env)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.count('"status": "proposed"') == due, proc.stdout[-2000:]

    def deployment(fleet_root: Path, due: int = due) -> None:
        run_id = server.run_deployment("dream-nightly", {"roots": [str(fleet_root)], "engine": "offline",
                                                         "shard_size": shard_size, "max_concurrency": threads})
        run = server.wait_until_done(run_id, timeout=3600, poll=0.2)  # the end seen within 0.2 s, as a process's exit
        assert run["state"]["type"] == "COMPLETED", run["state"]
        assert run["state"]["message"].startswith(f"{due} proposed, "), run["state"]["message"]
        phases.append(run_phases(run, server.subflow_runs(run_id)))

    home = root / "prefect-home"
    home.mkdir(parents=True)
    server = Server(home)
    workers = []
    try:
        server.cli("work-pool", "create", "dream", "--type", "process")
        server.cli("deploy", "--all")
        workers = [server.start_worker() for _ in range(2)]
        server.wait_for_worker("dream", timeout=300)
        # The first runs pay for the workers' imports and the server's warm-up: a small fleet first.
        phases: list[dict[str, float]] = []
        deployment(make_fleet(root / "warmup", total=10, due=2).root, due=2)
        cli_times, pf_times = [], []
        phases.clear()  # not the warm-up's
        for i in range(runs):
            a, b = fresh(f"cli-{i}"), fresh(f"prefect-{i}")
            cli_times.append(timed(lambda: run_all(a)))
            pf_times.append(timed(lambda: deployment(b)))
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:  # still shutting down a flow run's process: the figures are taken
                worker.kill()
                worker.wait()
        server.stop()
    t_cli, t_pf = statistics.median(cli_times), statistics.median(pf_times)
    print(f"prefect: {stores} stores ({due} due, offline engine), real server, process pool with 2 workers "
          f"(PREFECT_WORKER_QUERY_SECONDS={WORKER_QUERY_SECONDS:g}), shards of {shard_size}, {threads} thread(s) per "
          f"shard and for the CLI; median of {runs} run(s)")
    print(f"  each run, cli / prefect (s):              " + "  ".join(f"{c:.1f}/{p:.1f}" for c, p in zip(cli_times, pf_times)))
    print(f"  dream run --all (one process):            {t_cli:7.2f} s  {t_cli / due:6.3f} s per dreamed store")
    print(f"  dream-nightly deployment (Completed):     {t_pf:7.2f} s  {t_pf / due:6.3f} s per dreamed store")
    print(f"  ratio deployment / dream run --all:       {t_pf / t_cli:7.2f}x")
    print(f"  orchestration per dreamed store:          {(t_pf - t_cli) / due:+7.3f} s  (target <= 0.2 s)")
    print("  where the deployment's time went (server timestamps, medians):")
    for phase in phases[0]:
        print(f"    {phase + ':':<43}{statistics.median(p[phase] for p in phases):6.2f} s")


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


BARE_DUCKDB = """import sys
import duckdb
con = duckdb.connect()
for path in sys.argv[1:4]:
    con.execute(open(path).read())
print(con.execute("SELECT count(*) FROM report").fetchone()[0], con.execute("SELECT * FROM total").fetchone()[0])
"""


def report_figures(root: Path, stores: int, nights: int, runs: int) -> None:
    """`dream report --all` over `stores` histories, beside the same SQL run by DuckDB in a bare Python process."""
    from dream import history, history_report
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
    sql = {"view.sql": subprocess.run([*dream_report, "--sql"], capture_output=True, text=True, check=True).stdout,
           "report.sql": f"CREATE TABLE report AS {history_report.REPORT_SQL.replace('$since', 'NULL')}",
           "total.sql": f"CREATE TABLE total AS {history_report.TOTAL_SQL}"}
    for name, text in sql.items():
        (root / name).write_text(text)
    (root / "bare.py").write_text(BARE_DUCKDB)
    bare = [sys.executable, str(root / "bare.py"), *(str(root / name) for name in sql)]

    def report_command() -> None:
        out = subprocess.run([*dream_report, "--json"], capture_output=True, text=True, check=True).stdout
        assert f'"total": {{"stores": {stores},' in out, out[-300:]

    def plain_duckdb() -> None:
        out = subprocess.run(bare, capture_output=True, text=True, check=True).stdout
        assert out.split() == [str(stores), str(stores)], out

    report_command(), plain_duckdb()  # warm the page cache
    t_report, t_plain = median_of(runs, report_command), median_of(runs, plain_duckdb)
    lines = stores * len(seed.history.read_bytes().splitlines())
    print(f"report: {stores} stores, {lines:,} history lines, median of {runs} runs (each a new process)")
    print(f"  dream report --all --json:                {t_report:7.2f} s")
    print(f"  the same SQL, a bare python + duckdb:     {t_plain:7.2f} s")
    print(f"  ratio:                                    {t_report / t_plain:7.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stores", type=int, default=1000, help="stores in the gate fleet (default 1000)")
    parser.add_argument("--due", type=int, default=10, help="due stores among them (default 10)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--prefect-stores", type=int, default=1000)
    parser.add_argument("--prefect-due", type=int, default=100)
    parser.add_argument("--prefect-runs", type=int, default=1, help="runs of the Prefect part (each ~minutes)")
    parser.add_argument("--shard-size", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2, help="threads per shard, and for dream run --all")
    parser.add_argument("--no-prefect", action="store_true", help="skip the Prefect overhead figures")
    parser.add_argument("--report-only", action="store_true", help="only the dream report figures")
    parser.add_argument("--prefect-only", action="store_true", help="only the Prefect fleet figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        if args.prefect_only:
            prefect_figures(Path(tmp) / "prefect", args.prefect_stores, args.prefect_due, args.prefect_runs,
                            args.shard_size, args.threads)
            return
        report_figures(Path(tmp) / "report", args.stores, 30, args.runs)
        if args.report_only:
            return
        gate_figures(Path(tmp) / "gate", args.stores, args.due, args.runs)
        if not args.no_prefect:
            prefect_figures(Path(tmp) / "prefect", args.prefect_stores, args.prefect_due, args.prefect_runs,
                            args.shard_size, args.threads)


if __name__ == "__main__":
    main()
