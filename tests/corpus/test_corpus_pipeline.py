"""Every real store in the corpus: run, accept, roll back — bytes come back exactly.

The test walks the corpus folder, so stores added later are covered.
"""

from __future__ import annotations

import shutil

import pytest

from dream.pipeline import run as pipeline
from dream.review import decide
from dream.store.layout import Layout
from dream.store.tree import read_tree
from dream.store.validate import validate_tree
from dream.versions.proposals import Proposals
from helpers.stores import corpus_stores, snapshot_bytes

STORES = corpus_stores()


@pytest.mark.skipif(not STORES, reason="corpus folder not present")
@pytest.mark.parametrize("source", STORES, ids=[p.name for p in STORES])
def test_corpus_store_run_accept_rollback(source, tmp_path):
    store = tmp_path / source.name
    shutil.copytree(source, store, symlinks=True)
    original = snapshot_bytes(store)

    outcome = pipeline.run(store, engine="offline", force=True)
    assert outcome.status in ("proposed", "noop"), outcome.error
    assert snapshot_bytes(store) == original
    props = Proposals(Layout.open(store))
    if outcome.status == "noop":
        assert outcome.proposal_id is None and outcome.changes == 0
        assert props.ids() == []
        assert snapshot_bytes(store) == snapshot_bytes(source) == original
        return
    proposal = props.get(outcome.proposal_id)
    tree = props.tree(proposal)
    errors = [f for f in validate_tree(tree, set(proposal.changed)) if f.severity == "error"]
    assert errors == []

    decision = decide.accept(store, outcome.proposal_id)
    assert decision.version == outcome.base_version + 1
    assert read_tree(store) == tree
    # Files that are not memory (logs, sessions, anything else) are left as they were.
    memory = set(read_tree(source)) | set(tree)
    assert {k: v for k, v in snapshot_bytes(store).items() if k not in memory} == \
        {k: v for k, v in original.items() if k not in memory}
    decide.rollback(store, outcome.base_version)
    assert snapshot_bytes(store) == original
