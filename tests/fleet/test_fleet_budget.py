"""The fleet's budget for a night: `dream run --all` with the Claude engine against the test server.

Every store is a copy of the demo, so each dream costs about the same; the
server answers each dream with one final reply, and the history records
what each run spent.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from helpers.fake_anthropic import Reply, fake_api, text  # noqa: F401  (fixture)
from helpers.stores import DEMO

from dream import history
from dream.store.layout import Layout

STORES = 5


def fleet_of_demos(root: Path, count: int) -> list[Path]:
    stores = []
    for i in range(count):
        store = root / f"-work-project-{i}" / "memory"
        shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
        stores.append(store.resolve())
    return stores


def spent(store: Path) -> int:
    [run] = [r for r in history.runs(Layout.open(store)) if r["status"] != "skipped"][:1]
    return sum(run[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens"))


def night(cli, root: Path, *flags: str) -> dict[str, dict]:
    result = cli("run", "--all", "--root", str(root), "--engine", "claude", "--max-concurrency", "1", "--json", *flags)
    assert result.code == 0, result.stderr
    return {row["store"]: row for row in result.json["stores"]}


def test_the_budget_stops_the_night_at_the_right_store_and_the_next_night_starts_with_the_skipped(
        home, tmp_path, cli, fake_api, monkeypatch):
    stores = fleet_of_demos(tmp_path / "root", STORES)
    fake_api.play(*[Reply([text("Nothing to consolidate tonight.")]) for _ in range(4 * STORES)])
    # One dream's cost, measured on a store of the same shape outside the fleet.
    probe = fleet_of_demos(tmp_path / "probe", 1)[0]
    assert cli("run", "--store", str(probe), "--engine", "claude", "--json").code == 0
    one = spent(probe)
    config = Path(os.environ["DREAM_CONFIG"])
    config.write_text(f"fleet_budget_tokens = {int(one * 2.5)}\n")  # room for three dreams' worth: 2.5 reached

    first = night(cli, tmp_path / "root")

    statuses = [first[str(s)]["status"] for s in stores]
    assert statuses == ["proposed", "proposed", "proposed", "skipped", "skipped"], statuses
    for store in stores[3:]:
        row = first[str(store)]
        assert row["reason"] == "budget" and "budget of" in row["message"]
        assert history.runs(Layout.open(store))[0]["reason"] == "budget"  # recorded, so the next night knows
    # The next night, every store is due again (forced), and the budget covers one dream:
    # it goes to the first store the last night skipped, not to the first by path.
    config.write_text(f"fleet_budget_tokens = {int(one * 0.5)}\n")

    second = night(cli, tmp_path / "root", "--force")

    dreamed = [s for s in stores if second[str(s)]["status"] != "skipped"]
    assert dreamed == [stores[3]], {Path(s).parent.name: r["status"] for s, r in second.items()}
    assert all(second[str(s)]["reason"] == "budget" for s in stores if s != stores[3])
