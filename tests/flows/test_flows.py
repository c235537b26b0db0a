"""The Prefect flows, run under `prefect_test_harness` (one temporary server per session)."""

from __future__ import annotations

import shutil
import threading
import time

import pytest
from helpers.fleet_factory import make_fleet
from prefect.client.orchestration import get_client
from prefect.concurrency.sync import concurrency
from prefect.flow_runs import resume_flow_run
from helpers.prefect_fixtures import prefect_harness, read_artifacts, task_run_names  # noqa: F401  (sets env first)

from dream import history
from dream.pipeline.report import proposal_markdown
from dream.pipeline import run as pipeline
from dream.store.layout import store_slug
from dream.store.layout import Layout
from dream.store.lock import store_lock
from dream.versions.manifests import Versions
from dream.versions.proposals import ACCEPTED, REJECTED, Proposals
from flows import tasks
from flows.dream_fleet import dream_fleet
from flows.dream_store import dream_store

pytestmark = pytest.mark.usefixtures("prefect_harness")
STAGES = ["recover", "import", "gate", "lock", "snapshot", "gather", "consolidate", "validate", "propose", "record",
          "policy", "publish"]


def test_a_due_store_runs_every_stage_as_a_task_and_publishes_its_proposal(demo_store, tmp_path):
    twin = tmp_path / "twin"
    shutil.copytree(demo_store, twin)

    state = dream_store(str(demo_store), engine="offline", return_state=True)

    assert state.is_completed(), state.message
    outcome = state.result()
    assert outcome["status"] == "proposed" and state.message == f"proposed {outcome['proposal_id']}"
    assert task_run_names(state.state_details.flow_run_id, len(STAGES)) == STAGES
    # The same outcome as the command line's run on an identical store.
    direct = pipeline.run(twin, engine="offline")
    assert (outcome["changes"], outcome["base_version"], outcome["sessions_read"]) == (
        direct.changes, direct.base_version, direct.sessions_read)
    # The same history record.
    [row] = history.runs(Layout.open(demo_store))
    assert (row["run_id"], row["status"], row["proposal_id"]) == (outcome["run_id"], "proposed", outcome["proposal_id"])
    # The artifact holds the report and the diff.
    proposals = Proposals(Layout.open(demo_store))
    proposal = proposals.get(outcome["proposal_id"])
    [artifact] = read_artifacts(f"dream-{store_slug(demo_store)}")
    assert proposals.diff(proposal).strip() in artifact.data
    assert proposal_markdown(proposals, proposal).strip() in artifact.data


def test_a_nightly_run_applies_the_auto_accept_policy(demo_store):
    (demo_store / ".dream").mkdir()
    (demo_store / ".dream" / "config.toml").write_text("auto_accept = true\n")
    next(demo_store.glob("logs/**/s08-jenkins-cleanup.md")).unlink()  # no forget request: nothing dropped

    outcome = dream_store(str(demo_store), engine="offline", return_state=True).result()

    assert outcome["status"] == "proposed" and outcome["accepted_version"] == 2
    assert Proposals(Layout.open(demo_store)).get(outcome["proposal_id"]).status == ACCEPTED


def test_a_closed_gate_ends_completed_with_the_reason_and_records_the_skip(demo_store):
    dream_store(str(demo_store), engine="offline")

    state = dream_store(str(demo_store), engine="offline", return_state=True)

    assert state.is_completed()
    assert state.message.startswith("skipped (hours): ")
    assert state.result()["reason"] == "hours"
    assert task_run_names(state.state_details.flow_run_id, 4) == ["recover", "import", "gate", "record"]
    assert [r["status"] for r in history.runs(Layout.open(demo_store))] == ["skipped", "proposed"]


def test_a_store_locked_by_another_run_is_skipped_as_lock(demo_store):
    layout = Layout.open(demo_store)
    with store_lock(layout, "other-run"):
        state = dream_store(str(demo_store), engine="offline", return_state=True)
    assert state.is_completed()
    assert state.result()["reason"] == "lock"
    assert "other-run" in state.message
    assert Proposals(layout).ids() == []


def test_a_store_held_by_another_prefect_run_is_skipped_as_lock(demo_store, monkeypatch):
    normal_wait = tasks.STORE_SLOT_WAIT_SECONDS
    monkeypatch.setattr(tasks, "STORE_SLOT_WAIT_SECONDS", 0.5)
    name = tasks.store_slot_name(Layout.open(demo_store).root)
    tasks.ensure_store_slot(name)
    with concurrency(name, occupy=1, strict=True):
        state = dream_store(str(demo_store), engine="offline", return_state=True)
    assert state.is_completed()
    assert state.result()["reason"] == "lock"
    assert name in state.message
    # Released: the next run gets the slot and proposes. (Prefect's client
    # queues acquisitions; give it ample time behind the one that timed out:
    # it only waits as long as the slot is taken, and a loaded machine is slow.)
    monkeypatch.setattr(tasks, "STORE_SLOT_WAIT_SECONDS", max(normal_wait, 60))  # returns once it has the slot
    outcome = dream_store(str(demo_store), engine="offline")
    assert outcome["status"] == "proposed", outcome


def test_a_missing_store_fails_the_flow_with_a_clear_message(tmp_path):
    state = dream_store(str(tmp_path / "nope"), engine="offline", return_state=True)
    assert state.is_failed()
    assert "store folder does not exist" in state.message


@pytest.mark.parametrize("decision,status", [("accept", ACCEPTED), ("reject", REJECTED)])
def test_review_pause_waits_for_a_decision_and_applies_it(demo_store, decision, status):
    seen_before = _paused_runs_seen()
    resumer = threading.Thread(target=_resume_newly_paused, args=(seen_before, {"decision": decision, "comment": "looks right"}))
    resumer.start()
    state = dream_store(str(demo_store), engine="offline", review="pause", return_state=True)
    resumer.join(timeout=60)

    assert state.is_completed(), state.message
    result = state.result()
    assert result["review"]["status"] == f"{decision}ed"
    layout = Layout.open(demo_store)
    assert Proposals(layout).get(result["proposal_id"]).status == status
    [event] = history.events(layout, limit=1)
    assert (event["action"], event["comment"]) == (decision, "looks right")
    if decision == "accept":
        assert Versions(layout).current() == result["review"]["version"]


def _paused_runs_seen() -> set:
    return {run.id for run in _paused_runs()}


def _paused_runs() -> list:
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterStateName

    with get_client(sync_client=True) as client:
        return client.read_flow_runs(flow_run_filter=FlowRunFilter(state=dict(name=FlowRunFilterStateName(any_=["Paused"]))))


def _resume_newly_paused(seen: set, run_input: dict) -> None:
    for _ in range(600):
        fresh = [run for run in _paused_runs() if run.id not in seen]
        if fresh:
            resume_flow_run(fresh[0].id, run_input=run_input)
            return
        time.sleep(0.1)


def test_fleet_dreams_the_due_stores_in_shards_and_tabulates_every_outcome(tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=8, due=3)

    state = dream_fleet([str(fleet.root)], engine="offline", max_concurrency=2, shard_size=2, return_state=True)

    assert state.is_completed() and state.message == "3 proposed, 5 skipped"
    _assert_fleet_rows(fleet, state.result())
    [table] = read_artifacts("dream-fleet")[:1]
    assert "3 proposed" in table.description and "5 skipped" in table.description


def _assert_fleet_rows(fleet, rows: list[dict]) -> None:
    by_store = {row["store"]: row for row in rows}
    assert [row["store"] for row in rows] == sorted(by_store) and len(by_store) == len(fleet.stores_all)
    for store in fleet.due:
        row = by_store[str(store)]
        assert row["status"] == "proposed" and row["proposal"]
        assert Proposals(Layout.open(store)).get(row["proposal"]).status == "pending"
    for kind in ("hours", "sessions", "disabled"):
        for store in fleet.stores[kind]:
            row = by_store[str(store)]
            assert (row["status"], row["reason"]) == ("skipped", kind)
            assert row["message"]
            assert not Layout.open(store).history.exists()  # the scan wrote nothing


def test_a_shard_holds_its_stores_slots_while_it_runs_and_gives_them_back(tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=3, due=3)
    names = [tasks.store_slot_name(store) for store in fleet.due]
    seen: list[set[str]] = []

    def dream_one_seeing_the_slots(*args, **kwargs):
        seen.append({name for name in names if _slot(name).active_slots == 1})
        return dream_one(*args, **kwargs)

    from dream.pipeline import fleet as fleet_module
    dream_one = fleet_module.dream_one
    fleet_module.dream_one = dream_one_seeing_the_slots
    try:
        state = dream_fleet([str(fleet.root)], engine="offline", max_concurrency=1, shard_size=3, return_state=True)
    finally:
        fleet_module.dream_one = dream_one

    assert state.is_completed() and state.message == "3 proposed", state.message
    assert seen == [set(names)] * 3  # the first night creates the limits, then the shard holds all three
    assert [(_slot(name).limit, _slot(name).active_slots) for name in names] == [(1, 0)] * 3


def test_a_store_held_by_another_prefect_run_is_skipped_as_lock_and_its_shard_dreams_the_rest(tmp_path, monkeypatch):
    # Long enough for a free slot on a loaded machine (a round trip has taken over 0.5 s), short for the busy one.
    monkeypatch.setattr(tasks, "STORE_SLOT_WAIT_SECONDS", 5)
    fleet = make_fleet(tmp_path / "projects", total=3, due=3)
    busy = fleet.due[1]
    name = tasks.store_slot_name(busy)
    tasks.ensure_store_slot(name)

    with concurrency(name, occupy=1, strict=True):  # another run is dreaming it: the shard's one lease is refused
        state = dream_fleet([str(fleet.root)], engine="offline", shard_size=3, return_state=True)

    assert state.is_completed(), state.message
    rows = {row["store"]: row for row in state.result()}
    assert (rows[str(busy)]["status"], rows[str(busy)]["reason"]) == ("skipped", "lock")
    assert name in rows[str(busy)]["message"]
    assert [rows[str(store)]["status"] for store in fleet.due if store != busy] == ["proposed", "proposed"]
    assert all(_slot(tasks.store_slot_name(store)).active_slots == 0 for store in fleet.due)


def _slot(name: str):
    with get_client(sync_client=True) as client:
        return client.read_global_concurrency_limit_by_name(name)


def test_a_failing_store_is_a_failed_row_and_the_fleet_ends_failed_saying_how_many(tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=4, due=2)
    broken = fleet.due[0]
    (broken / "huge.md").write_text("x" * 2_000_000)  # over the limit for a memory file: the run refuses the store

    state = dream_fleet([str(fleet.root)], engine="offline", return_state=True)

    assert state.is_failed()
    assert state.message.startswith("1 of 4 store(s) failed; ")
    rows = {row["store"]: row for row in state.result(raise_on_failure=False)}
    assert rows[str(broken)]["status"] == "failed" and "huge.md" in rows[str(broken)]["message"]
    assert rows[str(fleet.due[1])]["status"] == "proposed"


def test_a_shard_that_cannot_be_started_on_the_pool_fails_its_stores_and_the_fleet_says_so(tmp_path):
    fleet = make_fleet(tmp_path / "projects", total=5, due=3)

    state = dream_fleet([str(fleet.root)], engine="offline", shard_size=2, shard_deployment="dream-shard/no-such-one",
                        return_state=True)

    assert state.is_failed() and state.message.startswith("3 of 5 store(s) failed; "), state.message
    rows = {row["store"]: row for row in state.result(raise_on_failure=False)}
    for store in fleet.due:  # both shards, each named by the error the server gave
        assert rows[str(store)]["status"] == "failed"
        assert rows[str(store)]["message"].startswith("shard not started: ObjectNotFound"), rows[str(store)]
    assert [row["status"] for row in rows.values() if row["store"] not in map(str, fleet.due)] == ["skipped"] * 2
    assert not any(Layout.open(store).history.exists() for store in fleet.due)  # no store was dreamed


def test_the_fleet_on_a_dask_cluster_of_two_worker_processes_proposes_every_due_store(tmp_path, monkeypatch):
    """The Dask recipe of docs/prefect.md; on main every shard failed ("`Dream_StoreModel` is not fully defined")."""
    pytest.importorskip("prefect_dask", reason="the dask extra is not installed (pip install -e '.[dask]')")
    from prefect.settings import PREFECT_API_URL
    from prefect_dask import DaskTaskRunner

    monkeypatch.setenv("PREFECT_API_URL", PREFECT_API_URL.value())  # Dask's worker processes report to this server
    fleet = make_fleet(tmp_path / "projects", total=8, due=4)
    runner = DaskTaskRunner(cluster_kwargs={"n_workers": 2, "processes": True, "threads_per_worker": 1})

    state = dream_fleet.with_options(task_runner=runner)([str(fleet.root)], engine="offline", shard_size=2,
                                                         return_state=True)

    assert state.is_completed(), state.message
    assert state.message == "4 proposed, 4 skipped"
    _assert_fleet_rows(fleet, state.result())


def test_a_shard_no_worker_takes_up_is_given_up_and_its_stores_are_named_not_dreamed(tmp_path, monkeypatch):
    from prefect.client.schemas.actions import WorkPoolCreate

    from flows.dream_fleet import dream_shard

    config = tmp_path / "config.toml"
    config.write_text("fleet_worker_wait_seconds = 3\n")
    monkeypatch.setenv("DREAM_CONFIG", str(config))
    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name="nobody-works-here", type="process"))
    dream_shard.to_deployment(name="unattended", work_pool_name="nobody-works-here").apply()
    fleet = make_fleet(tmp_path / "projects", total=5, due=3)

    state = dream_fleet([str(fleet.root)], engine="offline", shard_size=2, shard_deployment="dream-shard/unattended",
                        return_state=True)  # returns: on main this waited for ever

    assert state.is_failed() and state.message.startswith("3 of 5 store(s) failed; "), state.message
    assert all(str(store) in state.message for store in fleet.due)  # each store left undreamed, by name
    rows = {row["store"]: row for row in state.result(raise_on_failure=False)}
    for store in fleet.due:
        assert rows[str(store)]["status"] == "failed"
        assert rows[str(store)]["message"].startswith("not dreamed: no worker of the pool took up shard flow run")
    assert not any(Layout.open(store).history.exists() for store in fleet.due)
    with get_client(sync_client=True) as client:  # a worker that comes later finds nothing left to run
        shards = [run for run in client.read_flow_runs() if run.deployment_id is not None]
    assert len(shards) == 2 and all(run.state.is_cancelled() for run in shards)
