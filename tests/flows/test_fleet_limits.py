"""Shared limits across a Prefect fleet run: the Claude engine against a test server that counts requests at once.

The fleet flow runs two shards at once, each with three threads; the config
names a Prefect global concurrency limit of 2 for model calls. The server
answers each request slowly, so without the limit more than two overlap.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.fake_anthropic import Reply, fake_api, text  # noqa: F401  (fixture)
from helpers.prefect_fixtures import prefect_harness  # noqa: F401  (sets env first)
from helpers.stores import DEMO
from prefect.client.orchestration import get_client
from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate

from dream import history
from dream.store.layout import Layout
from flows.dream_fleet import dream_fleet

pytestmark = pytest.mark.usefixtures("prefect_harness")
STORES = 6
LIMIT = 2


def fleet_of_demos(root: Path, count: int) -> list[Path]:
    for i in range(count):
        shutil.copytree(DEMO, root / f"-work-project-{i}" / "memory", ignore=shutil.ignore_patterns(".dream"))
    return sorted(p.resolve() for p in root.glob("*/memory"))


def slow_replies(count: int) -> list[Reply]:
    return [Reply([text("Nothing to consolidate tonight.")], delay=0.6) for _ in range(count)]


def run_fleet_flow(root: Path, threads: int = 3) -> list[dict]:
    state = dream_fleet([str(root)], engine="claude", max_concurrency=threads, shard_size=3, return_state=True)
    assert state.is_completed(), state.message
    return state.result()


def test_without_a_limit_the_fleet_sends_more_requests_at_once_than_two(tmp_path, fake_api):
    fleet_of_demos(tmp_path / "root", STORES)
    fake_api.play(*slow_replies(4 * STORES))

    rows = run_fleet_flow(tmp_path / "root")

    assert [row["status"] for row in rows] == ["proposed"] * STORES
    assert fake_api.peak_in_flight > LIMIT  # the baseline: what the limit below must hold down


def test_a_model_call_limit_named_in_config_bounds_requests_at_once_across_shards(tmp_path, fake_api):
    name = "dream-model-calls-test"
    with get_client(sync_client=True) as client:
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=LIMIT))
    Path(os.environ["DREAM_CONFIG"]).write_text(f'model_concurrency_limit = "{name}"\n')
    stores = fleet_of_demos(tmp_path / "root", STORES)
    fake_api.play(*slow_replies(4 * STORES))

    rows = run_fleet_flow(tmp_path / "root")

    assert [row["status"] for row in rows] == ["proposed"] * STORES
    assert 1 <= fake_api.peak_in_flight <= LIMIT
    assert all(history.runs(Layout.open(s))[0]["engine"] == "claude" for s in stores)
    with get_client(sync_client=True) as client:  # every slot given back
        assert client.read_global_concurrency_limit_by_name(name).active_slots == 0


def test_the_fleet_budget_is_shared_by_the_shards_and_stops_the_night(tmp_path, fake_api):
    stores = fleet_of_demos(tmp_path / "root", STORES)
    fake_api.play(*slow_replies(4 * STORES))
    Path(os.environ["DREAM_CONFIG"]).write_text("fleet_budget_tokens = 1\n")  # spent by any one dream

    rows = {row["store"]: row for row in run_fleet_flow(tmp_path / "root", threads=1)}

    # Two shards of three, one store at a time each: each shard's first store may start on an
    # empty ledger, or find it charged by the other shard's (whichever process started first);
    # after one dream the ledger is spent, so no shard dreams a second store.
    dreamed = [s for s in stores if rows[str(s)]["status"] == "proposed"]
    assert dreamed and set(dreamed) <= {stores[0], stores[3]}, rows
    assert all(rows[str(s)]["reason"] == "budget" for s in stores if s not in dreamed)
    with get_client(sync_client=True) as client:  # the run's ledger is gone with it
        assert not [gcl for gcl in client.read_global_concurrency_limits(limit=200, offset=0)
                    if gcl.name.startswith("dream-fleet-budget-")]
