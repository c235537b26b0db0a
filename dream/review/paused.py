"""A proposal whose Prefect flow run is paused, waiting for a reviewer's decision.

The `dream-store` flow with ``review="pause"`` proposes, then waits for an
answer (Prefect's pause with input). Before it waits it leaves a note in the
store, ``.dream/review-waits/<proposal>.json``: the flow run's id and the
Prefect API it lives on. `dream accept` and `dream reject` decide as usual,
then `resume_waiting` resumes that flow run with the same decision, so the
flow ends `Completed` with the decision instead of waiting for its timeout,
and nobody needs the API's resume call or the UI's form.

The flow, resumed, finds the proposal already decided and records that; it
removes the note when it ends. Resuming goes through Prefect's REST API
(``POST /flow_runs/{id}/resume``) with httpx2 (the HTTP client the anthropic SDK brings): the library never imports
Prefect, which takes seconds to import.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from dream.store.layout import Layout
from dream.store.tree import atomic_write

WAITS = "review-waits"
RESUME_TIMEOUT_SECONDS = 10
BUSY_RETRIES = 4


@dataclass
class Resumed:
    """What became of the flow run waiting on a decided proposal."""

    flow_run_id: str
    api_url: str
    resumed: bool
    problem: str | None = None  # why it was not resumed

    def to_json(self) -> dict:
        return {"flow_run_id": self.flow_run_id, "api_url": self.api_url, "resumed": self.resumed,
                "problem": self.problem}


def wait_note(layout: Layout, proposal_id: str) -> Path:
    return layout.dream / WAITS / f"{proposal_id}.json"


def record_wait(store: str | Path, proposal_id: str, flow_run_id: str, api_url: str) -> Path:
    """Called by the flow just before it pauses: which flow run waits on this proposal, and where."""
    note = wait_note(Layout.open(store), proposal_id)
    note.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(note, json.dumps({"flow_run_id": flow_run_id, "api_url": api_url}).encode())
    return note


def clear_wait(store: str | Path, proposal_id: str) -> None:
    wait_note(Layout.open(store), proposal_id).unlink(missing_ok=True)


def waiting_run(store: str | Path, proposal_id: str) -> dict | None:
    """The note of the flow run waiting on `proposal_id`, or None (none waits, or the note is unreadable)."""
    try:
        note = json.loads(wait_note(Layout.open(store), proposal_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict) or not {"flow_run_id", "api_url"} <= set(note):
        return None
    return note


def resume_waiting(store: str | Path, proposal_id: str, decision: str, comment: str | None) -> Resumed | None:
    """Resume the flow run paused on this proposal with `decision` ("accept" or "reject"); None if none waits.

    The decision is already written when this runs, so a server that cannot
    be reached costs only the flow run's wait: it is reported, not raised.
    """
    note = waiting_run(store, proposal_id)
    if note is None:
        return None
    run_id, api = str(note["flow_run_id"]), str(note["api_url"]).rstrip("/")
    import httpx2  # start-up: only a proposal with a paused flow run needs it

    headers = {"Authorization": f"Bearer {os.environ['PREFECT_API_KEY']}"} if os.environ.get("PREFECT_API_KEY") else {}
    try:
        for attempt in range(BUSY_RETRIES):
            response = httpx2.post(f"{api}/flow_runs/{run_id}/resume", headers=headers, timeout=RESUME_TIMEOUT_SECONDS,
                                  json={"run_input": {"decision": decision, "comment": comment or ""}})
            if response.status_code not in (429, 503) or attempt == BUSY_RETRIES - 1:
                break
            time.sleep(1 + attempt)  # a busy server (SQLite locked) says so with 503; Prefect's client retries too
        response.raise_for_status()
        result = response.json()
    except (httpx2.HTTPError, ValueError) as exc:
        return Resumed(run_id, api, False, f"could not reach the Prefect API at {api}: {exc}")
    status = str(result.get("status", "")).upper()
    if status != "ACCEPT":
        reason = (result.get("details") or {}).get("reason") or status.lower()
        if "not paused" in reason:  # it timed out or was resumed in the UI: nothing waits any more
            clear_wait(store, proposal_id)
        return Resumed(run_id, api, False, reason)
    return Resumed(run_id, api, True)
