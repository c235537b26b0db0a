"""No request is lost: sessions whose requests were not accepted are read again.

A run records in its report which session logs it read and which session
each change came from. When a person takes only some files, rejects the
proposal or rolls an accepted one back, the sessions behind the changes
they did not keep are put on the store's replay list (`StoreState.replay`);
the next run reads them again, whatever their age, and so offers their
requests again. `dream reject --forget-requests` drops them instead.
"""

from __future__ import annotations

from dream.store.state import load_state, save_state
from dream.store.layout import Layout
from dream.versions.manifests import Versions
from dream.versions.proposals import ACCEPTED, ROLLED_BACK, Proposal, Proposals


def unkept_sessions(report: dict, skipped: list[str] | None = None) -> list[str]:
    """Session logs behind a proposal's changes that were not kept (`skipped` files; None: all).

    When the engine named no session for any change (it works from whole
    logs), every session the run read is replayed.
    """
    logs: dict[str, str] = report.get("session_logs") or {}
    if skipped is None:
        return sorted(logs.values())
    changes = report.get("changes") or []
    if not any(c.get("source") in logs for c in changes):
        return sorted(logs.values()) if skipped else []
    left_out = set(skipped)
    return sorted({logs[c["source"]] for c in changes if c.get("path") in left_out and c.get("source") in logs})


def replay(layout: Layout, logs: list[str]) -> None:
    """Put session logs on the replay list (called with the store's lock held)."""
    if not logs:
        return
    state = load_state(layout)
    state.replay = sorted(set(state.replay) | set(logs))
    save_state(layout, state)


def replay_proposal(layout: Layout, proposal: Proposal, skipped: list[str] | None = None) -> list[str]:
    logs = unkept_sessions(Proposals(layout).report(proposal), skipped)
    replay(layout, logs)
    return logs


def undone_by_rollback(layout: Layout, target: int) -> list[Proposal]:
    """The accepted proposals a rollback to version `target` undoes: those accepted into a later version."""
    versions, proposals = Versions(layout), Proposals(layout)
    undone = []
    for number in versions.numbers():
        version = versions.get(number)
        if number > target and version.source == "accept" and version.proposal_id:
            try:
                proposal = proposals.get(version.proposal_id)
            except Exception:  # a proposal removed by gc: nothing left of it to undo
                continue
            if proposal.status == ACCEPTED:
                undone.append(proposal)
    return undone


def replay_rolled_back(layout: Layout, undone: list[Proposal]) -> list[str]:
    """The sessions of the proposals a rollback undid go on the replay list; the proposals say `rolled_back`."""
    proposals = Proposals(layout)
    logs: set[str] = set()
    for proposal in undone:
        logs |= set(unkept_sessions(proposals.report(proposal)))
        proposals.set_status(proposal, ROLLED_BACK)
    replay(layout, sorted(logs))
    return sorted(logs)
