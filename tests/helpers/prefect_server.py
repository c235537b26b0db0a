"""A real Prefect server on 127.0.0.1 in a child process, with the project's deployments and process workers.

Used by the deployment tests (tests/flows/test_prefect_integration.py) and the
fleet bench (bench/bench_fleet.py). Nothing here reads or writes ``~/.prefect``
or the real ``~/.claude``: every child process gets the temporary ``HOME``.
The server's scheduler is off, so only the runs a caller triggers exist.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

REPO = Path(__file__).resolve().parents[2]
PREFECT = [sys.executable, "-m", "prefect"]
POOL = yaml.safe_load((REPO / "prefect.yaml").read_text())["deployments"][0]["work_pool"]["name"]
TERMINAL = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}
# How often a worker asks for new runs, as docs/prefect.md recommends for the dream pool: a fleet
# run's shards are created when it has scanned, and each waits for the next poll (Prefect's default is 10 s).
WORKER_QUERY_SECONDS = 1


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

    def wait_until_done(self, flow_run_id: str, timeout: float = 300, poll: float = 1) -> dict:
        """The flow run once it reaches a final state (the module's workers run it), asked every `poll` s."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            run = self.get(f"/flow_runs/{flow_run_id}")
            if run["state"]["type"] in TERMINAL:
                return run
            time.sleep(poll)
        raise AssertionError(f"flow run {flow_run_id} did not finish")

    def start_worker(self) -> subprocess.Popen:
        env = {**self.env, "PREFECT_WORKER_QUERY_SECONDS": str(WORKER_QUERY_SECONDS)}
        return subprocess.Popen([*PREFECT, "worker", "start", "--pool", POOL], env=env, cwd=REPO,
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
