"""When the index must shrink, it keeps what agents read: pinned first, then often and recently read.

The store is a Claude Code memory folder with 210 one-line memories (the
index holds at most 200 lines) and a transcript beside it in which the
agent read the first five memories, the ones an oldest-first cut would
move out first.
"""

from __future__ import annotations

import json

from dream.store.layout import Layout
from dream.versions.proposals import Proposals
from helpers.git_project import write

COUNT = 210


def _store(home):
    folder = home / ".claude" / "projects" / "-work-shop"
    store = folder / "memory"
    files = {"MEMORY.md": "".join(f"- [Note {n}](note_{n:03d}.md) — note number {n}\n" for n in range(COUNT))}
    for n in range(COUNT):
        pin = "pinned: true\n" if n == 5 else ""
        files[f"note_{n:03d}.md"] = f"---\nname: Note {n}\ndescription: note number {n}\ntype: project\n{pin}---\nNote {n}.\n"
    files["logs/2026/11/20/s1-work.md"] = "> the deploy went fine\n< good\n"
    write(store, files)
    reads = [{"type": "assistant", "timestamp": f"2026-11-1{n}T10:00:00Z", "cwd": str(folder),
              "message": {"role": "assistant", "content": [
                  {"type": "tool_use", "id": f"t{n}", "name": "Read", "input": {"file_path": str(store / f"note_{n:03d}.md")}}]}}
             for n in range(5)]
    (folder / "s1.jsonl").write_text("".join(json.dumps(r) + "\n" for r in reads))
    return store


def test_an_index_over_budget_keeps_the_read_and_pinned_memories(cli, home):
    store = _store(home)
    res = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert res.code == 0 and res.json["status"] == "proposed", (res.stdout, res.stderr)
    proposals = Proposals(Layout.open(store))
    proposal = proposals.get(res.json["proposal_id"])
    index = proposals.tree(proposal)["MEMORY.md"].decode()
    for n in range(6):  # read (0-4) and pinned (5): all still in the index
        assert f"(note_{n:03d}.md)" in index, n
    report = proposals.report(proposal)
    archived = [c for c in report["changes"] if c["action"] == "archived" and c["path"] == "MEMORY.md"]
    assert len(archived) == 1 and "least read" in archived[0]["detail"]
    moved = [n for n in range(COUNT) if f"(note_{n:03d}.md)" not in index]
    assert moved and all(n >= 6 for n in moved)
    assert all(f"Note {n}" in archived[0]["detail"] for n in moved)  # every line that moved out is named


def test_without_reads_the_oldest_lines_move_out_first(cli, home):
    store = _store(home)
    (store.parent / "s1.jsonl").unlink()
    res = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    proposals = Proposals(Layout.open(store))
    index = proposals.tree(proposals.get(res.json["proposal_id"]))["MEMORY.md"].decode()
    assert "(note_000.md)" not in index and "(note_005.md)" in index  # oldest out; the pinned one kept


def test_the_review_page_shows_the_reads(cli, home):
    from dream.review.page import proposal_page

    store = _store(home)
    res = cli("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    layout = Layout.open(store)
    html = proposal_page(layout, Proposals(layout).get(res.json["proposal_id"]))
    assert '<h2 id="reads">Read by agents (' in html and '<details id="reads-details" open>' in html  # some read: open
    assert "<td>note_004.md</td><td>1</td><td>2026-11-14T10:00:00Z</td>" in html
    assert "<td>note_009.md</td><td>0</td><td>never</td>" in html
