"""Every real store in the corpus: read without loss, consolidate validly, deterministically.

The corpus folder is walked at test time, so stores added later are covered.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from dream.config import Settings
from dream.engines.base import EngineInput
from dream.store.staging import Staging
from dream.engines.offline import OfflineEngine
from dream.engines.offline.similarity import normalize
from dream.store.model import Store
from dream.store.tree import changed_paths, materialize, read_tree
from dream.store.validate import errors, validate_tree
from helpers.stores import corpus_dir

CORPUS = corpus_dir()
STORES = sorted(p for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.is_dir() else []
EMPTY = pl.DataFrame(schema={"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64,
                             "role": pl.Utf8, "text": pl.Utf8})

pytestmark = pytest.mark.skipif(not STORES, reason=f"no corpus at {CORPUS}")


def _run(store: Path, staging: Path):
    tree = read_tree(store)
    materialize(tree, staging)
    inp = EngineInput(store, Staging(staging), EMPTY, [], Settings(), date(2026, 7, 1))
    result = OfflineEngine().consolidate(inp)
    return tree, read_tree(staging), result


def test_corpus_is_not_empty():
    assert len(STORES) >= 10


@pytest.mark.parametrize("store", STORES, ids=lambda p: p.name)
def test_parse_and_write_back_is_byte_identical(store):
    tree = read_tree(store)
    assert tree, f"{store} holds no memory files"
    assert Store.from_tree(tree).to_tree() == tree


@pytest.mark.parametrize("store", STORES, ids=lambda p: p.name)
def test_engine_output_is_valid_idempotent_and_deterministic(store, tmp_path):
    base, out, result = _run(store, tmp_path / "a")
    changed = set(changed_paths(base, out))
    if not result.changes:
        assert out == base
    found = errors(validate_tree(out, changed, base=base))
    assert found == [], "\n".join(map(str, found))
    # No sessions, so no forget requests: a removed file was merged, and every
    # line of its body must live on in the output.
    everything = normalize(b"\n".join(out.values()).decode("utf-8", "replace"))
    for path in set(base) - set(out):
        for line in Store.from_tree({path: base[path]}).topics[path].body_lines:
            assert normalize(line) in everything, f"{path}: lost line {line!r}"
    _, again, second = _run_on(out, tmp_path / "b")
    assert second.changes == [] and again == out
    _, twin, _ = _run(store, tmp_path / "c")
    assert twin == out
    assert store.is_dir() and read_tree(store) == base  # the corpus itself is untouched


def _run_on(tree, staging: Path):
    materialize(tree, staging)
    inp = EngineInput(staging, Staging(staging), EMPTY, [], Settings(), date(2026, 7, 1))
    result = OfflineEngine().consolidate(inp)
    return tree, read_tree(staging), result
