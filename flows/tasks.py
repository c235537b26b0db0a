"""The library's stages as Prefect tasks, plus the Prefect-only glue around them.

`dream.pipeline.run.run` holds the run's sequence; the flow hands it
`as_task`, which runs each stage as the Prefect task below so the UI shows
the run stage by stage, and `hold_store`, which takes the store's global
concurrency slot beside its file lock. Tasks are called directly from the
flow body, so they run in the flow's own thread and process: the slot taken
by the ``lock`` task is still held when ``propose`` runs, because
`hold_store` keeps it in its `ExitStack`.

Tasks take and return live library objects (a run context, a polars table),
so they neither cache nor persist their results.
"""

from __future__ import annotations

import json
import math
import uuid
import threading
import time
from contextlib import AbstractContextManager, ExitStack, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Callable, Iterator, Literal
from uuid import UUID

import httpx

from prefect import task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.client.orchestration import SyncPrefectClient, get_client
from prefect.client.schemas.actions import ArtifactCreate, GlobalConcurrencyLimitCreate
from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey, FlowRunFilter, FlowRunFilterId
from prefect.client.schemas.objects import ConcurrencyLeaseHolder, FlowRun
from prefect.client.schemas.responses import ConcurrencyLimitWithLeaseResponse
from prefect.concurrency.sync import concurrency
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound
from prefect.input import RunInput
from prefect.runtime import flow_run as flow_run_runtime
from prefect.runtime import task_run as task_run_runtime
from prefect.settings import PREFECT_API_URL
from prefect.states import Cancelled, Completed, Failed, State
from pydantic import Field

from dream.config import load_settings
from dream.errors import LockBusy
from dream.limits import Budget, Spending
from dream.outcomes import RunOutcome, Status
from dream.pipeline import run as pipeline
from dream.pipeline import fleet
from dream.pipeline.report import proposal_markdown
from dream.pipeline.stages import STAGE_NAMES
from dream.review import paused
from dream.review.decide import accept, reject
from dream.store.layout import Layout, store_slug
from dream.transcripts.discover import discover_stores
from dream.versions.proposals import ACCEPTED, REJECTED, Proposals

# Waiting for another Prefect run's slot on the same store is pointless: that
# run will consolidate the same sessions. Give up soon and skip as `lock`; but
# not too soon, since taking a free slot is a round trip to the Prefect server,
# which a busy machine answers slowly (5 s sent free stores to `lock` in a
# loaded test run).
STORE_SLOT_WAIT_SECONDS = 30


# ---------------------------------------------------------------- one store


def _stage_task(stage: Callable, name: str):
    return task(stage, name=name, cache_policy=NO_CACHE, persist_result=False)


# Each stage of `pipeline.run` and the task that runs it, named as the terminal names it.
STAGE_TASKS = {stage: _stage_task(stage, STAGE_NAMES[stage.__name__]) for stage in [
    pipeline.recover_interrupted_write, pipeline.import_logs, pipeline.mirror_remote, pipeline.gate, pipeline.snapshot,
    pipeline.gather, pipeline.consolidate, pipeline.validate, pipeline.propose, pipeline.finish, pipeline.apply_policy,
]}


def as_task(stage: Callable, *args, **kwargs):
    """`pipeline.run`'s `call` hook: run a stage as its Prefect task."""
    return STAGE_TASKS[stage](*args, **kwargs)


def store_slot_name(store: Path) -> str:
    return f"dream-store-{store_slug(store)}"


def ensure_store_slot(name: str) -> None:
    """Create the store's one-slot global concurrency limit if it does not exist yet.

    Prefect 3 no longer creates limits on first use (a missing limit is not
    enforced at all), so every run makes sure its store's limit is there.
    """
    with get_client(sync_client=True) as client:
        try:
            client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            _create_store_slot(client, name)


def _create_store_slot(client: SyncPrefectClient, name: str) -> None:
    try:
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=1))
    except ObjectAlreadyExists:
        pass  # another worker created it meanwhile


def enter_store_slot(name: str, held: ExitStack) -> bool:
    """Enter the store's global slot into `held`; False when another run keeps it past the wait."""
    ensure_store_slot(name)
    try:
        held.enter_context(concurrency(name, occupy=1, timeout_seconds=STORE_SLOT_WAIT_SECONDS, strict=True))
    except TimeoutError:
        return False
    return True


@task(name="lock", cache_policy=NO_CACHE, persist_result=False)
def take_store_slot(name: str, held: ExitStack) -> bool:
    """`enter_store_slot` as the per-store flow's ``lock`` task.

    A busy slot is returned, not raised, so the task ends `Completed`: for
    the run it is a skip, not a failure.
    """
    return enter_store_slot(name, held)


def hold_store(ctx: pipeline.RunContext) -> AbstractContextManager:
    """`pipeline.run`'s `hold` hook: the store's global Prefect slot, kept until the run is recorded.

    The file lock keeps runs on one machine apart; the slot also keeps apart
    workers that share stores on a network file system (docs/prefect.md).
    Taken by the ``lock`` task, so the per-store flow shows it as a stage.
    """
    return _holding_slot(ctx, take_store_slot)


def hold_store_slot(ctx: pipeline.RunContext) -> AbstractContextManager:
    """`hold_store` for a shard's threads: the same slot, without a task run per store."""
    return _holding_slot(ctx, enter_store_slot)


@contextmanager
def _holding_slot(ctx: pipeline.RunContext, enter: Callable[[str, ExitStack], bool]) -> Iterator[None]:
    name = store_slot_name(ctx.layout.root)
    with ExitStack() as held:
        if not enter(name, held):
            raise LockBusy(message=f"store is being dreamed by another Prefect run ({name})")
        yield


def artifact_key(store: Path) -> str:
    return f"dream-{store_slug(store)}"


@task(name="publish", cache_policy=NO_CACHE, persist_result=False)
def publish_proposal(store: str | Path, outcome: RunOutcome) -> str:
    """`proposal_artifact` as the per-store flow's ``publish`` task."""
    with get_client(sync_client=True) as client:
        return proposal_artifact(client, store, str(outcome.proposal_id))


def proposal_artifact(client: SyncPrefectClient, store: str | Path, proposal_id: str) -> str:
    """A markdown artifact with the proposal's report and diff, on the current flow (and task) run; its key.

    The caller's client is reused: a shard publishes all its proposals
    through one, since a new client costs a TLS context (~60 ms of CPU).
    """
    layout = Layout.open(store)
    proposals = Proposals(layout)
    proposal = proposals.get(proposal_id)
    key = artifact_key(layout.root)
    body = (
        f"# Dream proposal {proposal.id}\n\n"
        f"Store: `{layout.root}`  \nBase version: {proposal.base_version}  \n"
        f"Files: `{proposals.dir(proposal.id)}`\n\n"
        f"{proposal_markdown(proposals, proposal)}\n\n## Diff\n\n```diff\n{proposals.diff(proposal)}\n```\n"
    )
    client.create_artifact(ArtifactCreate(
        key=key, type="markdown", data=body, description=f"dream proposal {proposal.id} for {layout.root}",
        flow_run_id=flow_run_runtime.id, task_run_id=task_run_runtime.id,
    ))
    return key


class Review(RunInput):
    """What a reviewer answers when a paused dream asks for a decision."""

    decision: Literal["accept", "reject"] = Field(description="accept the proposal into the store, or reject it")
    # A plain string (not `str | None`), so the UI's form shows a text box rather than a type picker.
    comment: str = Field(default="", description="recorded in the store's history with the decision")


@contextmanager
def waiting_for_review(store: str | Path, proposal_id: str) -> Iterator[None]:
    """Leave a note naming this flow run in the store while it waits, for `dream accept` to resume it."""
    paused.record_wait(store, proposal_id, str(flow_run_runtime.id), PREFECT_API_URL.value() or "")
    try:
        yield
    finally:
        paused.clear_wait(store, proposal_id)


# The proposal's status once a decision is applied: `dream accept` may have applied it before resuming us.
DECIDED = {"accept": ACCEPTED, "reject": REJECTED}


@task(name="apply-review", cache_policy=NO_CACHE, persist_result=False)
def apply_review(store: str | Path, proposal_id: str, review: Review) -> dict:
    proposal = Proposals(Layout.open(store)).get(proposal_id)
    if proposal.status == DECIDED[review.decision]:  # decided by `dream accept` / `dream reject`, which resumed us
        return {"status": proposal.status, "proposal_id": proposal.id, "version": proposal.accepted_version,
                "decided_by": "command line"}
    decide = accept if review.decision == "accept" else reject
    return decide(store, proposal_id, comment=review.comment or None).to_json()


def final_state(outcome: RunOutcome, decision: dict | None = None) -> State:
    """Proposed, noop and skipped runs are `Completed`; a failed run is `Failed`.

    The message is what the Prefect UI shows beside the run: the skip reason
    and its explanation, or the proposal id (and the reviewer's decision).
    """
    data = {**outcome.to_json(), "review": decision}
    if decision is not None:
        return Completed(message=f"proposed {outcome.proposal_id}, {decision['status']}", data=data)
    if outcome.status == Status.FAILED:
        return Failed(message=f"failed ({outcome.reason}): {outcome.error}", data=data)
    if outcome.status == Status.SKIPPED:
        return Completed(message=f"skipped ({outcome.reason}): {outcome.error}", data=data)
    if outcome.status == Status.PROPOSED:
        return Completed(message=f"proposed {outcome.proposal_id}", data=data)
    return Completed(message=f"noop ({outcome.reason})", data=data)


# ---------------------------------------------------------------- a fleet


def discover(roots: list[str] | None) -> list[Path]:
    """The stores under `roots` (default: Claude Code's projects), sorted by path."""
    return discover_stores(None if roots is None else [Path(r) for r in roots])


def dream_shard_stores(stores: list[str], engine: str, force: bool, max_concurrency: int,
                       budget: dict | None = None) -> list[dict]:
    """The work of one shard, wherever it runs: `fleet.dream_stores` holding each store's Prefect slot.

    The shard takes its stores' slots in one lease (`holding_shard_slots`);
    a store it could not take that way takes its own slot (`hold_store_slot`).
    `budget` (from `fleet_budget`) names the fleet run's ledger on the server,
    which every shard charges and reads, on whatever machine it runs.
    """
    spending = None
    if budget is not None:
        limits = Budget(budget["tokens"], budget["usd"])
        spending = Spending(limits, PrefectLedger(budget["ledger"], limits.unit))
    with get_client(sync_client=True) as client, holding_shard_slots(client, stores) as held:
        def hold(ctx: pipeline.RunContext) -> AbstractContextManager:
            return nullcontext() if store_slot_name(ctx.layout.root) in held else hold_store_slot(ctx)

        # Each proposal is published as its store ends, while the pool's other threads go on dreaming.
        return fleet.dream_stores([Path(s) for s in stores], engine=engine, force=force,
                                  max_concurrency=max_concurrency, hold=hold, spending=spending,
                                  on_row=lambda row: publish_row_proposal(client, row))


def publish_row_proposal(client: SyncPrefectClient, row: dict) -> None:
    """A shard row's proposal, if any, as its store's markdown artifact, as the per-store flow publishes it."""
    if not row["proposal"]:
        return
    try:
        proposal_artifact(client, row["store"], row["proposal"])
    except Exception as exc:  # the proposal stands; only its copy in the UI is missing
        print(f"{row['store']}: no artifact for proposal {row['proposal']}: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- a shard's store slots, in one lease

# A shard's lease lapses this long after its worker dies; while the shard runs it is renewed.
SHARD_LEASE_SECONDS = 300
HTTP_LOCKED = 423  # the server's answer when a limit in the request has no free slot


@contextmanager
def holding_shard_slots(client: SyncPrefectClient, stores: list[str]) -> Iterator[set[str]]:
    """Take the one-slot limits of all `stores` at once, kept until the shard ends; the slot names held.

    Two requests per shard (take, give back) instead of three or four per
    store (read or create the limit, take, give back), and no round trip
    in a store's dream. The server grants all or none: when another run
    holds one of the stores, nothing is held here and each store takes its
    own slot as a lone run does, waiting for it or skipping as ``lock``.
    Limits not yet on the server (a store's first night) are created, then
    taken in a second lease.
    """
    names = sorted({store_slot_name(Path(store)) for store in stores})
    leases: list[UUID] = []
    held: set[str] = set()
    try:
        granted = _lease(client, names)
        if granted is not None:
            leases.append(granted.lease_id)
            held.update(limit.name for limit in granted.limits)
            missing = [name for name in names if name not in held]
            for name in missing:
                _create_store_slot(client, name)
            granted = _lease(client, missing) if missing else None
            if granted is not None:
                leases.append(granted.lease_id)
                held.update(limit.name for limit in granted.limits)
        with _renewing(leases):
            yield held
    finally:
        for lease_id in leases:
            try:
                client.release_concurrency_slots_with_lease(lease_id)
            except Exception as exc:  # the lease lapses on its own within SHARD_LEASE_SECONDS
                print(f"could not give back the shard's store slots (lease {lease_id}): {type(exc).__name__}: {exc}")


def _lease(client: SyncPrefectClient, names: list[str]) -> ConcurrencyLimitWithLeaseResponse | None:
    """One slot of each existing limit in `names`, under one lease; None when one of them has no free slot."""
    holder = ConcurrencyLeaseHolder(type="flow_run", id=flow_run_runtime.id) if flow_run_runtime.id else None
    try:
        response = client.increment_concurrency_slots_with_lease(
            names, slots=1, mode="concurrency", lease_duration=SHARD_LEASE_SECONDS, holder=holder)
    except httpx.HTTPStatusError as exc:
        if exc.response.status_code == HTTP_LOCKED:
            return None
        raise
    return ConcurrencyLimitWithLeaseResponse.model_validate(response.json())


@contextmanager
def _renewing(leases: list[UUID]) -> Iterator[None]:
    """Renew `leases` in a thread of its own while the shard runs (its own client: the shard's is busy)."""
    stop = threading.Event()

    def renew() -> None:
        with get_client(sync_client=True) as client:
            while not stop.wait(SHARD_LEASE_SECONDS / 3):
                for lease_id in leases:
                    try:
                        client.renew_concurrency_lease(lease_id, lease_duration=SHARD_LEASE_SECONDS)
                    except Exception as exc:  # tried again a third of a lease later
                        print(f"could not renew the shard's store slots (lease {lease_id}): {exc}")

    renewer = threading.Thread(target=renew, name="dream-shard-lease", daemon=True)
    if leases:
        renewer.start()
    try:
        yield
    finally:
        stop.set()
        if leases:
            renewer.join(timeout=30)


# ---------------------------------------------------------------- the fleet's budget, shared by its shards

# A ledger is a global concurrency limit used as a counter: its active slots are
# the spend, one slot per token, or per hundredth of a cent. Its limit is only
# a ceiling the counter never reaches; the budget is compared by the shards.
LEDGER_SLOTS_PER_UNIT = {"tokens": 1, "usd": 10_000}
LEDGER_CEILING = 2_000_000_000


class PrefectLedger:
    """The spend of one fleet run, kept on the Prefect server so that shards on any machine share it."""

    def __init__(self, name: str, unit: str):
        self.name, self.scale = name, LEDGER_SLOTS_PER_UNIT[unit]

    def spent(self) -> float:
        with get_client(sync_client=True) as client:
            return client.read_global_concurrency_limit_by_name(self.name).active_slots / self.scale

    def charge(self, amount: float) -> None:
        with get_client(sync_client=True) as client:
            client.increment_concurrency_slots([self.name], slots=math.ceil(amount * self.scale), mode="concurrency")


@contextmanager
def fleet_budget(settings_overrides: dict | None = None) -> Iterator[dict | None]:
    """The night's budget from the config (`fleet_budget_tokens`, `fleet_budget_usd`) and its fresh ledger.

    None when no budget is set. The ledger is deleted when the fleet run ends.
    """
    budget = Budget.from_settings(load_settings(None, settings_overrides))
    if budget is None:
        yield None
        return
    name = f"dream-fleet-budget-{flow_run_runtime.id or uuid.uuid4().hex}"
    with get_client(sync_client=True) as client:
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=LEDGER_CEILING))
    try:
        yield {"tokens": budget.tokens, "usd": budget.usd, "ledger": name}
    finally:
        with get_client(sync_client=True) as client:
            client.delete_global_concurrency_limit_by_name(name)


SHARD_ARTIFACT = "dream-shard"


def publish_shard(rows: list[dict]) -> None:
    """The shard's rows as a table artifact of its flow run, where the fleet flow reads them back."""
    create_table_artifact(table=rows, key=SHARD_ARTIFACT, description=f"dream shard: {fleet.fleet_summary(rows)}")


def run_shard_deployments(deployment: str, shards: list[list[str]], engine: str, force: bool,
                          max_concurrency: int, budget: dict | None = None,
                          worker_wait: float | None = None) -> list[dict]:
    """Each shard as a flow run of `deployment` on its work pool, all waited for together; their rows, in order.

    The shard runs are created one after another from the fleet flow's own
    thread (two creations at once made the server's SQLite answer 503, which
    the client retries two seconds later), then watched with one query per
    poll however many shards there are. A shard that could not be started,
    or ended without its table (crashed, cancelled), is one failed row per
    store, naming the shard's flow run and its state. A shard no worker took
    up while none of the shards ran for `worker_wait` seconds
    (`fleet_worker_wait_seconds`) is cancelled: its stores are failed rows
    saying they were not dreamed.
    """
    parameters = {"engine": engine, "force": force, "max_concurrency": max_concurrency, "budget": budget}
    started = [_start_shard(deployment, stores, parameters) for stores in shards]
    wait = load_settings(None).fleet_worker_wait_seconds if worker_wait is None else worker_wait
    ended = wait_for_flow_runs([run.id for run in started if isinstance(run, FlowRun)], wait)
    tables = shard_tables(list(ended))
    return [row for stores, run in zip(shards, started) for row in _shard_rows(stores, run, ended, tables, wait)]


def _start_shard(deployment: str, stores: list[str], parameters: dict) -> FlowRun | Exception:
    """The shard's flow run, scheduled now and linked under the fleet run; or why it could not be created."""
    try:
        run = run_deployment(deployment, parameters={"stores": stores, **parameters}, timeout=0)
        assert isinstance(run, FlowRun)  # called from a sync flow: the sync variant, not a coroutine
        return run
    except Exception as exc:  # the other shards still run
        return exc


def _shard_rows(stores: list[str], run: FlowRun | Exception, ended: dict[UUID, FlowRun],
                tables: dict[UUID, list[dict]], worker_wait: float) -> list[dict]:
    if isinstance(run, Exception):
        return [fleet.failed_row(store, f"shard not started: {type(run).__name__}: {run}") for store in stores]
    if run.id in tables:
        return tables[run.id]
    if run.id not in ended:
        return [fleet.failed_row(store, f"{NOT_TAKEN}: no worker of the pool took up shard flow run {run.name} "
                                        f"in {worker_wait:g} s (fleet_worker_wait_seconds); cancelled")
                for store in stores]
    state = ended[run.id].state
    name, message = (state.name, state.message or "no result") if state else ("unknown", "no result")
    return [fleet.failed_row(store, f"shard flow run {run.name} ended {name}: {message}") for store in stores]


# How often a waiting fleet flow asks the server about its shards: one query for
# all of them, so once a second costs the server's database little.
SHARD_POLL_SECONDS = 1
# The most flow runs or artifacts one query returns (the server's PREFECT_API_DEFAULT_LIMIT).
QUERY_LIMIT = 200
# How a store's row begins when its shard was never taken up (`undreamed_stores` finds them by it).
NOT_TAKEN = "not dreamed"


def wait_for_flow_runs(ids: list[UUID], worker_wait: float) -> dict[UUID, FlowRun]:
    """The flow runs `ids` that ended, each once it is final; the others no worker took up, and are cancelled.

    A run still scheduled is waiting for a worker. While another run of `ids`
    runs, the pool is alive and busy, and the wait goes on; once none has run
    nor ended for `worker_wait` seconds, the scheduled ones are given up.
    """
    ended: dict[UUID, FlowRun] = {}
    idle_since = time.monotonic()
    with get_client(sync_client=True) as client:
        while len(ended) < len(ids):
            time.sleep(SHARD_POLL_SECONDS)
            waiting = [i for i in ids if i not in ended][:QUERY_LIMIT]
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=waiting)),
                                         limit=QUERY_LIMIT)
            finished = {run.id: run for run in runs if run.state is not None and run.state.is_final()}
            ended.update(finished)
            if finished or any(run.state is not None and not run.state.is_scheduled() for run in runs
                               if run.id not in finished):
                idle_since = time.monotonic()  # a shard ran or ended: the pool has a worker
            elif time.monotonic() - idle_since > worker_wait:
                for run_id in (i for i in ids if i not in ended):
                    client.set_flow_run_state(run_id, Cancelled(message=f"no worker took it up in {worker_wait:g} s"),
                                              force=True)
                return ended
    return ended


def shard_tables(flow_run_ids: list[UUID]) -> dict[UUID, list[dict]]:
    """The `dream-shard` table of each of these flow runs that published one, by flow run."""
    tables: dict[UUID, Any] = {}
    with get_client(sync_client=True) as client:
        for i in range(0, len(flow_run_ids), QUERY_LIMIT):
            found = client.read_artifacts(
                artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[SHARD_ARTIFACT])),
                flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=flow_run_ids[i:i + QUERY_LIMIT])),
                limit=QUERY_LIMIT,
            )
            for artifact in found:
                if artifact.flow_run_id is not None:
                    data = artifact.data  # a table's rows, as the JSON text the server keeps
                    tables[artifact.flow_run_id] = json.loads(data) if isinstance(data, str) else data
    return tables


def shard_rows(future, stores: list[str]) -> list[dict]:
    """A shard task's rows; a shard that raised (a lost Dask worker, an API error) fails each of its stores."""
    try:
        return future.result()
    except Exception as exc:
        return [fleet.failed_row(store, f"shard failed: {type(exc).__name__}: {exc}") for store in stores]


def publish_fleet(rows: list[dict]) -> None:
    create_table_artifact(table=rows, key="dream-fleet", description=f"dream fleet: {fleet.fleet_summary(rows)}")


NAMED_MAX = 20  # stores a fleet run's state message names; the flow's log names them all


def undreamed_stores(rows: list[dict]) -> list[str]:
    """The stores whose shard no worker took up."""
    return [row["store"] for row in rows if (row.get("message") or "").startswith(NOT_TAKEN)]


def _named_undreamed(rows: list[dict]) -> str:
    undreamed = undreamed_stores(rows)
    if not undreamed:
        return ""
    more = f" and {len(undreamed) - NAMED_MAX} more" if len(undreamed) > NAMED_MAX else ""
    return f"; not dreamed, no worker took up their shard: {', '.join(undreamed[:NAMED_MAX])}{more}"


def fleet_state(rows: list[dict]) -> State:
    """`Completed`, or `Failed` saying how many stores failed; the rows are the state's data either way."""
    failed = fleet.fleet_counts(rows)[Status.FAILED]
    if failed:
        message = f"{failed} of {len(rows)} store(s) failed; {fleet.fleet_summary(rows)}{_named_undreamed(rows)}"
        return Failed(message=message, data=rows)
    return Completed(message=fleet.fleet_summary(rows), data=rows)
