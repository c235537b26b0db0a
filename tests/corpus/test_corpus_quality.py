"""Issue #20, Must show: one offline dream plus accept on every corpus store loses nothing from sight.

Measured by ``bench/corpus_quality.py`` (one implementation of each count):
no fact dropped, no topic file changed only to carry its index hook, no
rule-bearing index line taken out of what the agent reads at session start.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from helpers.stores import corpus_stores

STORES = corpus_stores()
BENCH = Path(__file__).resolve().parents[2] / "bench" / "corpus_quality.py"


def _bench():
    spec = importlib.util.spec_from_file_location("corpus_quality", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(not STORES, reason="corpus folder not present (../shared/corpus or $DREAM_CORPUS)")
@pytest.mark.parametrize("source", STORES, ids=[p.name for p in STORES])
@pytest.mark.slow  # about 50 s on a shared machine: a run and an accept per store
def test_one_dream_plus_accept_keeps_every_fact_and_rule_in_sight(source):
    row = _bench().measure(source)
    assert row["status"] in ("proposed", "noop")
    assert (row["dropped"], row["hook_only"], row["rules_out"]) == (0, 0, 0), row
