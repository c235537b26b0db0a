"""The deployments end to end, against a real Prefect server on 127.0.0.1.

One server per module (its own port, ``PREFECT_HOME`` and SQLite file), the
project's own ``prefect.yaml`` deployed with ``prefect deploy --all``, flow
runs triggered through the REST API the way the UI does, and a process
worker that runs them. Nothing here reads or writes ``~/.prefect`` or the
real ``~/.claude``: every child process gets a temporary ``HOME``.

The server's scheduler is off, so only the runs this test triggers exist.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from helpers.claude_home import SAID, claude_project, plain_store
from helpers.fleet_factory import make_fleet
from helpers.prefect_server import POOL, PREFECT, REPO, Server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("prefect-server-home")
    srv = Server(home)
    try:
        srv.cli("work-pool", "create", POOL, "--type", "process")
        srv.cli("deploy", "--all")
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def workers(server):
    """Two process workers on the pool, as on two machines: the fleet run on one, its shards on either."""
    started = [server.start_worker() for _ in range(2)]
    try:
        yield started
    finally:
        for worker in started:
            worker.terminate()
        for worker in started:
            try:
                worker.wait(timeout=30)
            except subprocess.TimeoutExpired:
                worker.kill()


def _rows(server: Server, flow_run_id: str) -> dict[str, dict]:
    table = server.artifact("dream-fleet")
    assert table is not None and table["flow_run_id"] == flow_run_id
    rows = json.loads(table["data"]) if isinstance(table["data"], str) else table["data"]
    return {row["store"]: row for row in rows}


def _pending_proposals(store: Path) -> list[str]:
    folder = store / ".dream" / "proposals"
    if not folder.is_dir():
        return []
    return [p.name for p in folder.iterdir() if json.loads((p / "proposal.json").read_text())["status"] == "pending"]


def test_deploy_all_registers_the_fleet_deployments_with_their_schedules_and_limit(server):
    for name in ("dream-nightly", "dream-scan"):
        deployment = server.get(f"/deployments/name/dream-fleet/{name}")
        assert deployment["work_pool_name"] == POOL
        assert deployment["global_concurrency_limit"]["limit"] == 1
        [step] = deployment["pull_steps"]
        assert step["prefect.deployments.steps.set_working_directory"]["directory"] in (str(REPO), "{{ $PWD }}")
    nightly = server.get("/deployments/name/dream-fleet/dream-nightly")["schedules"][0]["schedule"]
    assert nightly["cron"] == "0 3 * * *" and nightly["timezone"]
    scan = server.get("/deployments/name/dream-fleet/dream-scan")["schedules"][0]["schedule"]
    assert scan["interval"] == 600


def _run_in_a_terminal(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """Run `argv` on a pseudo-terminal that nobody types into: (exit code or None if it waited for input, output)."""
    main, child = pty.openpty()
    proc = subprocess.Popen(argv, env=env, cwd=REPO, stdin=child, stdout=child, stderr=child, close_fds=True)
    os.close(child)
    output = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main], [], [], 1)
        if ready:
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the child closed the terminal: it has exited
                break
            if not chunk:
                break
            output += chunk
        elif proc.poll() is not None:
            break
    if proc.poll() is None:
        proc.kill()
    code = proc.wait()
    os.close(main)
    return (code if time.monotonic() < deadline else None), output.decode(errors="replace")


def test_deploy_all_in_a_terminal_asks_nothing_and_creates_every_deployment(server):
    """Issue 39: in a terminal, Prefect asks about schedules for any deployment without a `schedules` key."""
    env = {k: v for k, v in server.env.items() if k != "PREFECT_CLI_PROMPT"}  # prompts on, as in a user's shell
    code, output = _run_in_a_terminal([*PREFECT, "deploy", "--all"], env, timeout=240)
    assert "Would you like to" not in output, output[-2000:]
    assert code == 0, output[-2000:]
    for deployment in yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"]:
        flow = deployment["entrypoint"].split(":")[1].replace("_", "-")  # each flow is named after its function
        assert server.get(f"/deployments/name/{flow}/{deployment['name']}")["name"] == deployment["name"]


def test_deployments_start_with_their_schedules_off_and_the_offline_engine(server):
    """A first `prefect deploy --all` must not dream every store on the machine until the user opts in."""
    for name in ("dream-nightly", "dream-scan"):
        deployment = server.get(f"/deployments/name/dream-fleet/{name}")
        assert [schedule["active"] for schedule in deployment["schedules"]] == [False]
        assert deployment["parameters"]["engine"] == "offline"


def test_nightly_dreams_the_open_stores_and_skips_the_closed_ones(server, workers, tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=6, due=2)

    flow_run_id = server.run_deployment("dream-nightly", {"roots": [str(fleet.root)], "engine": "offline"})
    run = server.wait_until_done(flow_run_id)

    assert run["state"]["type"] == "COMPLETED", run["state"]
    assert run["state"]["message"] == "2 proposed, 4 skipped"
    rows = _rows(server, flow_run_id)
    assert set(rows) == {str(s) for paths in fleet.stores.values() for s in paths}
    for store in fleet.due:
        row = rows[str(store)]
        assert row["status"] == "proposed"
        assert _pending_proposals(store) == [row["proposal"]]
        artifact = server.artifact_holding(f"dream-{_slug(store)}", row["proposal"])
        assert artifact is not None, f"no artifact for {store}"
        assert row["proposal"] in artifact["data"] and "```diff" in artifact["data"], artifact["data"][:500]
    for kind in ("hours", "sessions", "disabled"):
        for store in fleet.stores[kind]:
            row = rows[str(store)]
            assert (row["status"], row["reason"]) == ("skipped", kind) and row["message"]
            assert _pending_proposals(store) == []
            assert server.artifact(f"dream-{_slug(store)}") is None


def test_scan_over_200_stores_dreams_the_due_ones_in_shards_not_a_flow_run_each(server, workers, tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=200, due=5)

    flow_run_id = server.run_deployment("dream-scan", {"roots": [str(fleet.root)], "engine": "offline",
                                                       "shard_size": 3})
    run = server.wait_until_done(flow_run_id)

    assert run["state"]["type"] == "COMPLETED", run["state"]
    subflows = server.subflow_runs(flow_run_id)  # 5 due stores in shards of 3: two shard runs
    assert len(subflows) == 2 and all(f["state"]["type"] == "COMPLETED" for f in subflows)
    rows = _rows(server, flow_run_id)
    due = {str(s): rows[str(s)] for s in fleet.due}
    assert sorted(s for s, row in rows.items() if row["status"] == "proposed") == sorted(due), due
    closed = [s for kind, paths in fleet.stores.items() if kind != "due" for s in paths]
    assert len(closed) == 195
    for store in closed:
        assert rows[str(store)]["status"] == "skipped"
        assert not (store / ".dream" / "history.jsonl").exists()  # a closed gate costs no run


def test_a_failing_store_is_a_failed_row_and_the_fleet_run_says_how_many_failed(server, workers, tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=4, due=2)
    broken = fleet.due[0]
    (broken / "huge.md").write_text("x" * 2_000_000)  # over the limit for a memory file: the run refuses it

    flow_run_id = server.run_deployment("dream-nightly", {"roots": [str(fleet.root)], "engine": "offline"})
    run = server.wait_until_done(flow_run_id)

    assert run["state"]["type"] == "FAILED"
    assert run["state"]["message"].startswith("1 of 4 store(s) failed; ")
    rows = _rows(server, flow_run_id)
    assert rows[str(broken)]["status"] == "failed" and "huge.md" in rows[str(broken)]["message"]
    assert rows[str(fleet.due[1])]["status"] == "proposed"


def test_nightly_on_a_claude_code_machine_with_no_config_dreams_each_store_by_its_kind(server, workers, tmp_path):
    """The workers' HOME holds ~/.claude/projects/-home-me-shop/{*.jsonl, memory/} and no dream config at all."""
    home = Path(server.env["HOME"])
    assert not Path(server.env["DREAM_CONFIG"]).exists()
    shop = claude_project(home)
    notes = plain_store(tmp_path / "elsewhere")
    roots = [str(home / ".claude" / "projects"), str(notes.parent)]
    try:
        flow_run_id = server.run_deployment("dream-nightly", {"roots": roots, "engine": "offline"})
        run = server.wait_until_done(flow_run_id)

        assert run["state"]["type"] == "COMPLETED", run["state"]
        rows = _rows(server, flow_run_id)
        assert rows[str(shop.resolve())]["status"] == "proposed", rows
        assert rows[str(notes.resolve())]["status"] == "proposed", rows
        assert len(list((shop / "logs").rglob("*.md"))) == len(SAID)  # imported from the JSONL beside it
        assert not (notes / ".dream" / "import-state.json").exists()  # its own logs/, no transcripts
        for store in (shop, notes):
            assert _pending_proposals(store) == [rows[str(store.resolve())]["proposal"]]

        again = server.run_deployment("dream-nightly", {"roots": roots, "engine": "offline"})
        assert server.wait_until_done(again)["state"]["message"] == "2 skipped"
        rows = _rows(server, again)
        assert (rows[str(shop.resolve())]["status"], rows[str(shop.resolve())]["reason"]) == ("skipped", "hours")
        runs = [json.loads(line) for line in (shop / ".dream" / "history.jsonl").read_text().splitlines()]
        assert [r["status"] for r in runs if r.get("kind") == "run"] == ["proposed"]  # the pre-check ran nothing
    finally:
        shutil.rmtree(home / ".claude")  # the module's other tests share this HOME


def test_dream_accept_resumes_a_flow_run_paused_for_review(server, workers, tmp_path, cli):
    fleet = make_fleet(tmp_path / "projects", total=1, due=1)
    (store,) = fleet.due
    flow_run_id = server.run_deployment("dream-store", {"store": str(store), "review": "pause"}, flow="dream-store")
    paused = server.wait_for_paused(timeout=240)
    assert paused["id"] == flow_run_id
    (proposal,) = _pending_proposals(store)

    accepted = cli("accept", "--store", str(store), "--comment", "read it over coffee", "--json")

    assert accepted.code == 0, accepted.stderr
    assert accepted.json["status"] == "accepted" and accepted.json["proposal_id"] == proposal
    assert accepted.json["flow_run"] == {"flow_run_id": paused["id"], "api_url": server.api, "resumed": True,
                                         "problem": None}
    store_run = server.wait_until_done(flow_run_id)
    assert store_run["state"]["type"] == "COMPLETED", store_run["state"]
    assert store_run["state"]["message"] == f"proposed {proposal}, accepted"
    assert json.loads((store / ".dream" / "proposals" / proposal / "proposal.json").read_text())["status"] == "accepted"
    assert not (store / ".dream" / "review-waits").exists() or not any((store / ".dream" / "review-waits").iterdir())
    assert cli("accept", "--store", str(store)).code != 0  # nothing pending any more


def test_an_idle_worker_stops_on_sigterm(server):
    worker = subprocess.Popen([*PREFECT, "worker", "start", "--pool", POOL], env=server.env, cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        server.wait_for_worker(POOL, timeout=120)
        worker.send_signal(signal.SIGTERM)
        code = worker.wait(timeout=60)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert code in (0, 1, -signal.SIGTERM, 130), worker.stdout.read() if worker.stdout else ""


def _slug(store: Path) -> str:
    from dream.store.layout import store_slug

    return store_slug(store)
