"""Every real store in the corpus: run, accept, roll back — bytes come back exactly.

The test walks the corpus folder, so stores added later are covered.
"""

from __future__ import annotations

import shutil

import pytest

from dream import accept as decide
from dream import pipeline
from dream.layout import Layout
from dream.proposals import Proposals
from dream.validate import validate_tree
from tests.conftest import corpus_stores
from tests.test_pipeline_demo import snapshot_bytes

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
    if outcome.status == "noop":
        return
    props = Proposals(Layout.open(store))
    proposal = props.get(outcome.proposal_id)
    tree = props.tree(proposal)
    errors = [f for f in validate_tree(tree, set(proposal.changed)) if f.severity == "error"]
    assert errors == []

    decision = decide.accept(store, outcome.proposal_id)
    assert decision.version == outcome.base_version + 1
    decide.rollback(store, outcome.base_version)
    assert snapshot_bytes(store) == original
