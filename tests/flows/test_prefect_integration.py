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
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml
from helpers.fleet_factory import make_fleet

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PREFECT = [sys.executable, "-m", "prefect"]
POOL = yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"][0]["work_pool"]["name"]
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Server:
    def __init__(self, home: Path):
        self.port = _free_port()
        self.api = f"http://127.0.0.1:{self.port}/api"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
            "HOME": str(home), "PREFECT_HOME": str(home / ".prefect"), "PREFECT_API_URL": self.api,
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_UI_ENABLED": "false",
            "PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED": "false", "PREFECT_CLI_PROMPT": "false",
            "DREAM_CONFIG": str(home / "dream-config.toml"), "PWD": str(REPO),
        }
        self.env.pop("ANTHROPIC_API_KEY", None)
        self.log = open(home / "server.log", "w")
        self.proc = subprocess.Popen(
            [*PREFECT, "server", "start", "--host", "127.0.0.1", "--port", str(self.port)],
            env=self.env, stdout=self.log, stderr=subprocess.STDOUT, cwd=home,
        )
        self._wait_healthy()

    def _wait_healthy(self, timeout: float = 180) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prefect server exited: {Path(self.log.name).read_text()[-2000:]}")
            try:
                if httpx.get(f"{self.api}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        raise RuntimeError("prefect server did not become healthy")

    def cli(self, *args: str, timeout: float = 180) -> str:
        proc = subprocess.run([*PREFECT, *args], env=self.env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
        assert proc.returncode == 0, f"prefect {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc.stdout

    def post(self, path: str, body: dict | None = None):
        for _ in range(10):  # a busy SQLite server answers 503 (retry later), as Prefect's own client knows
            response = httpx.post(f"{self.api}{path}", json=body or {}, timeout=30)
            if response.status_code not in (429, 503):
                break
            time.sleep(2)
        response.raise_for_status()
        return response.json() if response.content else None

    def get(self, path: str):
        response = httpx.get(f"{self.api}{path}", timeout=30)
        response.raise_for_status()
        return response.json()

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()

    # ------------------------------------------------------------ helpers

    def run_deployment(self, name: str, parameters: dict, flow: str = "dream-fleet") -> str:
        deployment = self.get(f"/deployments/name/{flow}/{name}")
        run = self.post(f"/deployments/{deployment['id']}/create_flow_run", {"parameters": parameters})
        return run["id"]

    def wait_until_done(self, flow_run_id: str, timeout: float = 300) -> dict:
        """The flow run once it reaches a final state (the module's workers run it)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            run = self.get(f"/flow_runs/{flow_run_id}")
            if run["state"]["type"] in TERMINAL:
                return run
            time.sleep(1)
        raise AssertionError(f"flow run {flow_run_id} did not finish")

    def start_worker(self) -> subprocess.Popen:
        return subprocess.Popen([*PREFECT, "worker", "start", "--pool", POOL], env=self.env, cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def wait_for_worker(self, pool: str, timeout: float) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.post(f"/work_pools/{pool}/workers/filter", {}):
                return
            time.sleep(1)
        raise AssertionError("no worker registered")

    def wait_for_paused(self, timeout: float) -> dict:
        """The first flow run found paused (waiting for a reviewer's input)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            runs = self.post("/flow_runs/filter", {"flow_runs": {"state": {"type": {"any_": ["PAUSED"]}}}})
            if runs:
                return runs[0]
            time.sleep(1)
        raise AssertionError("no flow run paused for review")

    def artifact(self, key: str) -> dict | None:
        found = self.post("/artifacts/latest/filter", {"artifacts": {"key": {"any_": [key]}}})
        return found[0] if found else None

    def artifact_holding(self, key: str, text: str, timeout: float = 30) -> dict | None:
        """The latest artifact `key` once it holds `text` (a loaded server may record it a moment late)."""
        deadline = time.time() + timeout
        while True:
            artifact = self.artifact(key)
            if (artifact is not None and text in artifact["data"]) or time.time() > deadline:
                return artifact
            time.sleep(0.5)

    def flow_runs_of(self, flow_name: str) -> list[dict]:
        return self.post("/flow_runs/filter", {"flows": {"name": {"any_": [flow_name]}}})

    def subflow_runs(self, parent_flow_run_id: str) -> list[dict]:
        task_runs = self.post("/task_runs/filter", {"flow_runs": {"id": {"any_": [parent_flow_run_id]}}})
        ids = [t["id"] for t in task_runs]
        if not ids:
            return []
        return self.post("/flow_runs/filter", {"flow_runs": {"parent_task_run_id": {"any_": ids}}})


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
    assert len(closed) == 197
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
