"""Honest headlines: index lines moved into the archive are counted apart from merged and dropped."""

from __future__ import annotations

from pathlib import Path

from dream.review.page import render
from dream.review.retention import render_markdown, summarize


def test_lines_moved_out_of_the_index_are_counted_as_archived():
    rules = [f"- Rule {i}: keep the ledger entry {i} balanced against account {i * 7}" for i in range(12)]
    base = {"MEMORY.md": ("\n".join(rules) + "\n").encode(),
            "a.md": b"---\nname: A\ndescription: a\ntype: project\n---\n\nAlpha.\n"}
    archive = "\n".join(["---", "name: archive", "description: d", "type: reference", "---", "", "## moved", ""]
                        + rules[:10]) + "\n"
    proposed = {"MEMORY.md": ("\n".join(rules[10:]) + "\n- [Archive](archive.md) — old entries\n").encode(),
                "archive.md": archive.encode(), "a.md": base["a.md"]}
    retention = summarize(base, proposed)
    assert (retention["archived"], retention["merged"], retention["dropped"]) == (10, 0, 0)
    headline = "\n".join(render_markdown(retention))
    assert "0 dropped, 0 merged into another file, 10 moved out of the index (archived)" in headline
    page = render(title="t", old=base, new=proposed)
    assert 'id="count-archived">10<' in page


def test_a_duplicate_merged_elsewhere_is_still_merged():
    base = {"MEMORY.md": b"- [A](a.md)\n", "a.md": b"Alpha fact about the ledger balance.\n",
            "b.md": b"Beta.\n"}
    proposed = {"MEMORY.md": b"- [A](a.md)\n", "b.md": b"Beta.\nAlpha fact about the ledger balance.\n"}
    retention = summarize(base, proposed)
    assert retention["merged"] == 1 and retention["archived"] == 0


def test_offline_run_report_counts_archived(cli, tmp_path: Path):
    store = tmp_path / "store"
    store.mkdir()
    lines = "".join(f"- Rule {i}: reconcile payout batch {i} with bank file {i * 13}\n" for i in range(230))
    (store / "MEMORY.md").write_text("# Rules\n" + lines)
    result = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert result.code == 0 and result.json["status"] == "proposed", result.stderr
    shown = cli("diff", "--store", str(store), env={"COLUMNS": "200"})
    assert "moved out of the index (archived)" in shown.stdout
    assert "0 dropped" in shown.stdout


def test_the_page_lists_what_needs_a_person():
    base = {"MEMORY.md": b"- [A](a.md)\n", "a.md": b"Alpha.\n"}
    report = {"needs_person": ["forget “the staging notes”: several memories match; nothing removed"]}
    page = render(title="t", old=base, new=base, report=report)
    assert 'id="needs-person"' in page and "several memories match" in page
    assert 'id="needs-person"' not in render(title="t", old=base, new=base, report={})
