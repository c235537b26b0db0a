"""Prefect test isolation: import this module before anything imports prefect.

At import it points ``PREFECT_HOME`` at a fresh temporary folder (so tests
never touch the user's ``~/.prefect``), turns analytics off and drops a
heartbeat setting inherited from the environment. These settings only
matter to Prefect, so other test modules in the same process are unaffected.
"""

from __future__ import annotations

import os
import tempfile

PREFECT_HOME = tempfile.mkdtemp(prefix="dream-prefect-home-")
os.environ["PREFECT_HOME"] = PREFECT_HOME
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
os.environ.pop("PREFECT_RUNNER_HEARTBEAT_FREQUENCY", None)
os.environ.pop("PREFECT_API_URL", None)
os.environ.pop("PREFECT_PROFILES_PATH", None)

import pytest  # noqa: E402
from prefect.testing.utilities import prefect_test_harness  # noqa: E402


_harness_started = False


@pytest.fixture(scope="session")
def prefect_harness():
    """One temporary Prefect server and database for the whole test session.

    pytest makes a separate fixture of it in each test module that imports
    it, and a second harness started beside the first broke Prefect's event
    client (no task run reached the server after it). So only the first
    copy starts a server; the others share it.
    """
    global _harness_started
    if _harness_started:
        yield
        return
    _harness_started = True
    # A loaded 2-core machine has taken over a minute to bring the temporary server up.
    with prefect_test_harness(server_startup_timeout=180):
        yield


# ---------------------------------------------------------------- reading back what a run left


def read_artifacts(key: str) -> list:
    """Every version of the artifact `key`, newest first."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
    from prefect.client.schemas.sorting import ArtifactSort

    with get_client(sync_client=True) as client:
        return client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])), sort=ArtifactSort.CREATED_DESC,
        )


def task_run_names(flow_run_id, expected: int, wait: float = 30.0) -> list[str]:
    """The task names of a flow run, in the order they started, once `expected` of them are on the server.

    Prefect records task runs through events, after the flow has returned: the
    last ones can reach the server a moment later, more so on a loaded machine.
    """
    import time

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId
    from prefect.client.schemas.sorting import TaskRunSort

    deadline = time.monotonic() + wait
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])),
                sort=TaskRunSort.EXPECTED_START_TIME_ASC,
            )
            if len(runs) >= expected or time.monotonic() > deadline:
                break
            time.sleep(0.2)
    return [run.name.rsplit("-", 1)[0] for run in sorted(runs, key=lambda r: r.start_time or r.expected_start_time)]
