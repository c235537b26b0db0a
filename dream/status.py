"""What `dream status` reports about a store: gate, lock, versions, pending proposals."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from .config import load_settings
from .gate import check_gate
from .layout import Layout
from .lock import current_holder
from .proposals import Proposals
from .recovery import finish_interrupted_write
from .state import load_state
from .versions import Versions


def store_status(store: str | Path, overrides: dict | None = None) -> dict[str, Any]:
    layout = Layout.open(store)
    settings = load_settings(layout.root, overrides)
    problem = finish_interrupted_write(layout)
    state = load_state(layout)
    holder = current_holder(layout)
    proposals = Proposals(layout)
    return {
        "store": str(layout.root),
        "gate": check_gate(layout, settings, state=state).to_json(),
        "lock": None if holder is None else asdict(holder),
        "current_version": Versions(layout).current(),
        "pending": [p.id for p in proposals.pending()],
        "damaged_proposals": proposals.damaged(),
        "last_consolidated_at": state.last_consolidated_at,
        "failures": state.failures,
        "interrupted_accept": layout.journal.exists() or problem is not None,
        "interrupted_accept_problem": problem,
    }
