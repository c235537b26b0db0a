"""Every store of a fleet, the way Prefect scales out: one parent flow, a few shards, no flow run per store.

    dream-fleet: scan (discover stores, check each gate) → cut the due stores into shards
                 → each shard to the work pool (`run_deployment` of dream-shard), or to the flow's task runner
                 → wait for the shards → the fleet's table
    dream-shard: take the stores' slots (one lease) → a bounded pool of threads dreams the shard's stores
                 (`dream.pipeline.fleet.dream_stores`), each proposal published as its store ends → the shard's table

The sequence is the library's one fleet runner, `dream.pipeline.fleet.run_fleet`,
the same as `dream run --all`; only the dreamer differs. A scan where nothing is
due costs the gate checks and nothing else: no shard, no lock, no history write.

Shards go to the work pool when `shard_deployment` names a deployment (the
deployments in prefect.yaml do: `dream-shard/dream-shard`), so workers on any
machine of the pool share the night. Without it, each shard is a task on the
flow's task runner: threads by default, a Dask cluster with
``dream_fleet.with_options(task_runner=DaskTaskRunner(...))`` (docs/prefect.md).

The night's budget (`fleet_budget_tokens` / `fleet_budget_usd` in the config
of the machine that runs this flow) is charged by every shard to one ledger
on the Prefect server; once it is reached, the remaining stores skip with
reason ``budget`` and the next night's run dreams them first.

A store that fails is a failed row with its reason; the fleet run then ends
`Failed`, its message saying how many of how many failed. A shard that no
worker of the pool takes up is waited for `fleet_worker_wait_seconds` (30
minutes by default) while none of the fleet's shards runs; then it is
cancelled, and its stores are failed rows that say they were not dreamed,
named in the flow's log.

The module does not use ``from __future__ import annotations``: Prefect builds
a pydantic model from each flow's signature, and on a Dask worker (where the
function arrives by value) string annotations such as ``Literal[...]`` could
not be resolved.
"""

from pathlib import Path
from typing import Literal, Optional

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.states import State

from dream.pipeline import fleet
from flows import tasks

Engine = Literal["auto", "offline", "claude"]
SHARD_DEPLOYMENT = "dream-shard/dream-shard"


@flow(name="dream-shard", persist_result=False, log_prints=True)
def dream_shard(stores: list[str], engine: Engine = "auto", force: bool = False, max_concurrency: int = 4,
                budget: Optional[dict] = None) -> list[dict]:
    """Dream these stores, `max_concurrency` at a time; publish and return one row each.

    `budget` is the fleet run's (tokens, usd and the ledger's name), set by `dream_fleet`.
    """
    rows = tasks.dream_shard_stores(stores, engine, force, max_concurrency, budget)
    tasks.publish_shard(rows)
    print(f"shard of {len(stores)} store(s): {fleet.fleet_summary(rows)}")
    return rows


@task(name="shard", cache_policy=NO_CACHE, persist_result=False, task_run_name="shard of {stores[0]}")
def shard_task(stores: list[str], engine: Engine, force: bool, max_concurrency: int,
               budget: Optional[dict]) -> list[dict]:
    """A shard as a task of the fleet flow's task runner (threads, or a Dask worker)."""
    return tasks.dream_shard_stores(stores, engine, force, max_concurrency, budget)


@flow(name="dream-fleet", persist_result=False, log_prints=True)
def dream_fleet(roots: Optional[list[str]] = None, engine: Engine = "auto", force: bool = False,
                max_concurrency: int = 4, shard_size: int = 50, shard_deployment: Optional[str] = None) -> State:
    """Dream every due store under `roots` (default: Claude Code's ``~/.claude/projects``)."""
    stores = tasks.discover([str(Path(r).expanduser()) for r in roots] if roots else None)

    def dream_in_shards(due: list[Path], budget: Optional[dict]) -> list[dict]:
        cut = [[str(store) for store in shard] for shard in fleet.shards(due, shard_size)]
        if shard_deployment:
            return tasks.run_shard_deployments(shard_deployment, cut, engine, force, max_concurrency, budget)
        futures = [shard_task.submit(shard, engine, force, max_concurrency, budget) for shard in cut]
        return [row for future, shard in zip(futures, cut) for row in tasks.shard_rows(future, shard)]

    with tasks.fleet_budget() as budget:  # the night's budget, if the config sets one, and its shared ledger
        rows = fleet.run_fleet(stores, force=force, dreamer=lambda due: dream_in_shards(due, budget))
    tasks.publish_fleet(rows)
    print(f"{len(rows)} store(s): {fleet.fleet_summary(rows)}")
    if undreamed := tasks.undreamed_stores(rows):
        print(f"not dreamed, no worker took up their shard: {', '.join(undreamed)}")
    return tasks.fleet_state(rows)
