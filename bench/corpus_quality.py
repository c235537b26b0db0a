"""Quality of one offline dream plus accept on every store of the shared corpus.

For each store in ``../shared/corpus`` (or $DREAM_CORPUS): copy it, run the
offline engine once (``--force``), accept the proposal, and count on the
result what issue #12 asks to be zero:

* facts dropped: memory lines found nowhere in the proposal (the retention
  report's ``dropped``), apart from those a forget request asked for;
* broken pointers: links in MEMORY.md (entries and prose lines alike) to a
  store file that does not exist, before → after;
* slug titles: index titles that are a file slug (``[feedback-use-keys]``),
  before → after;
* prose → memory: new topic files holding a prose line or heading of the
  original index.

The corpus is never written: every run works on a copy.

    python bench/corpus_quality.py            # a table
    python bench/corpus_quality.py --json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from dream.pipeline.run import run
from dream.review import decide
from dream.store.layout import Layout
from dream.store.model import parse_index_line, resolve_link
from dream.store.tree import INDEX_NAME, read_tree
from dream.versions.proposals import Proposals

ROOT = Path(__file__).resolve().parents[1]
SLUG = re.compile(r"^[a-z0-9.]+(?:[_-][a-z0-9.]+)+$|\.md$")  # lower case joined by _ or -, or a file name


def corpus() -> list[Path]:
    base = Path(os.environ.get("DREAM_CORPUS", ROOT.parent / "shared" / "corpus"))
    if not base.is_dir():
        base = ROOT.parent.parent / "shared" / "corpus"  # a worktree one folder deeper
    return sorted(p for p in base.iterdir() if (p / "MEMORY.md").is_file())


def broken_pointers(tree: dict[str, bytes]) -> int:
    index = tree.get(INDEX_NAME, b"").decode("utf-8", "replace")
    count = 0
    for line in index.splitlines():
        for target in parse_index_line(line).links:
            resolved = resolve_link(INDEX_NAME, target)
            if resolved and resolved.endswith(".md") and resolved not in tree:
                count += 1
    return count


def slug_titles(tree: dict[str, bytes]) -> int:
    index = tree.get(INDEX_NAME, b"").decode("utf-8", "replace")
    return sum(1 for line in index.splitlines()
               if (p := parse_index_line(line)).kind == "link" and SLUG.match(p.title.strip()))


def prose_made_memories(before: dict[str, bytes], after: dict[str, bytes]) -> int:
    """New topic files whose text is a prose line or heading of the original index."""
    prose = {" ".join(p.text.strip("#> ").split()).lower()
             for line in before.get(INDEX_NAME, b"").decode("utf-8", "replace").splitlines()
             if (p := parse_index_line(line)).kind in ("prose", "heading") and len(line.strip()) > 20}
    count = 0
    for path in set(after) - set(before):
        body = " ".join(after[path].decode("utf-8", "replace").split()).lower()
        count += any(text in body for text in prose) and "archive" not in path
    return count


def measure(src: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="dream-corpus-") as scratch:
        store = Path(scratch) / src.name
        shutil.copytree(src, store, ignore=shutil.ignore_patterns(".dream"))
        before = read_tree(store)
        started = time.perf_counter()
        outcome = run(store, engine="offline", force=True)
        report: dict = {}
        if outcome.proposal_id:
            proposals = Proposals(Layout.open(store))
            report = proposals.report(proposals.get(outcome.proposal_id))
            decide.accept(store, outcome.proposal_id)
        seconds = time.perf_counter() - started
        after = read_tree(store)
    retention = report.get("retention") or {"dropped": 0, "merged": 0, "archived": 0, "items": []}
    forgotten = {c["path"] for c in report.get("changes", []) if c["action"] == "forgotten"}
    dropped = [i for i in retention["items"] if i["status"] == "dropped" and i["path"] not in forgotten]
    return {
        "store": src.name, "files": len(before), "status": str(outcome.status),
        "changes": len(report.get("changes", [])), "dropped": len(dropped),
        "merged": retention.get("merged", 0), "archived": retention.get("archived", 0),
        "broken_before": broken_pointers(before), "broken_after": broken_pointers(after),
        "slugs_before": slug_titles(before), "slugs_after": slug_titles(after),
        "prose_to_memory": prose_made_memories(before, after), "seconds": round(seconds, 2),
        "needs_person": len(outcome.needs_person),
    }


COLUMNS = [("store", "store"), ("files", "files"), ("status", "run"), ("changes", "changes"),
           ("dropped", "facts dropped"), ("merged", "merged"), ("archived", "archived"),
           ("broken", "broken pointers"), ("slugs", "slug titles"), ("prose_to_memory", "prose→memory"),
           ("needs_person", "needs a person")]


def cell(row: dict, key: str) -> str:
    if key in ("broken", "slugs"):
        return f"{row[key + '_before']} → {row[key + '_after']}"
    return str(row[key])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    stores = corpus()
    if not stores:
        print("corpus_quality: no corpus stores found (set DREAM_CORPUS)", file=sys.stderr)
        return 2
    rows = [measure(src) for src in stores]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print("| " + " | ".join(title for _, title in COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    for row in rows:
        print("| " + " | ".join(cell(row, key) for key, _ in COLUMNS) + " |")
    total = {"dropped": sum(r["dropped"] for r in rows), "broken": sum(r["broken_after"] for r in rows),
             "slugs": sum(r["slugs_after"] for r in rows), "prose": sum(r["prose_to_memory"] for r in rows)}
    print(f"\n{len(rows)} stores: {total['dropped']} facts dropped, {total['broken']} broken pointers, "
          f"{total['slugs']} slug titles, {total['prose']} index prose lines made into memories (after accept)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
