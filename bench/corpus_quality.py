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
  original index;
* hook-only files (issue #20): topic files that existed before and changed
  only to carry the text of their own index line: every line the dream added
  to the file is frontmatter or the title or hook of an index line pointing
  at it, and no line of the file was removed. Counted apart when the hook
  went in labelled (``**From the index:** …``), which the engine does only
  when the file lacked words of the part of the hook it cut;
* rules out of the index (issue #20): rule-bearing index lines whose text is
  no longer in what the agent reads at session start. A line is
  rule-bearing when it carries a rule or a fact of its own: an inline rule
  (a list item without a link), or a link line's hook; for a link to a
  missing file, its title and hook, since the line is all that is left of
  that memory. Three words at least (six characters for CJK), so a bare
  title is not counted. Its text stays in sight when, after accept, it is in
  MEMORY.md (wrapping aside), or every word it carries (``content_keys``) is
  in one indexed memory: an index line and the topic file it links to, the
  archive aside;
* new descriptions = name: topic files whose frontmatter the dream added
  (or created) with a ``description:`` that only repeats ``name:``.

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
from dream.engines.offline.similarity import content_keys, normalize, says_something, word_keys
from dream.store.model import TopicFile, parse_index_line, resolve_link
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


def _index(tree: dict[str, bytes]) -> list[str]:
    return tree.get(INDEX_NAME, b"").decode("utf-8", "replace").splitlines()


def _topic(tree: dict[str, bytes], path: str) -> TopicFile:
    return TopicFile.parse(path, tree[path])


def _hooks_by_file(tree: dict[str, bytes]) -> dict[str, set[str]]:
    """Each topic file's index titles and hooks, normalized."""
    found: dict[str, set[str]] = {}
    for text in _index(tree):
        line = parse_index_line(text)
        resolved = resolve_link(INDEX_NAME, line.target) if line.kind == "link" else None
        if resolved:
            found.setdefault(resolved, set()).update(n for n in (normalize(line.title), normalize(line.hook)) if n)
    return found


def _from_hook(line: str, hooks: set[str]) -> bool:
    norm = normalize(line)
    return not norm or any(norm in hook or hook in norm for hook in hooks)


HOOK_LABEL = "**From the index:**"


def hook_only_files(before: dict[str, bytes], after: dict[str, bytes], labelled: bool = False) -> list[str]:
    """Topic files that changed only to take in their own index line's title or hook (`labelled`: as a
    labelled part)."""
    hooks = _hooks_by_file(before)
    found = []
    for path in sorted(set(before) & set(after)):
        if path == INDEX_NAME or before[path] == after[path] or path not in hooks:
            continue
        old, new = _topic(before, path), _topic(after, path)
        old_body = [l for l in old.body_lines if l.strip()]
        new_body = [l for l in new.body_lines if l.strip()]
        kept = iter(new_body)
        in_order = all(any(line == n for n in kept) for line in old_body)  # nothing removed or reordered
        added = list(new_body)
        for line in old_body:
            added.remove(line)
        if in_order and added and all(_from_hook(l, hooks[path]) for l in added) \
                and any(l.startswith(HOOK_LABEL) for l in added) == labelled:
            found.append(path)
    return found


def rule_bearing(tree: dict[str, bytes]) -> list[str]:
    """The rule or fact text each rule-bearing index line carries (see the module doc)."""
    found = []
    for text in _index(tree):
        line = parse_index_line(text)
        if line.kind == "rule":
            carried = line.hook
        elif line.kind == "link":
            resolved = resolve_link(INDEX_NAME, line.target)
            missing = bool(resolved) and resolved.endswith(".md") and resolved not in tree
            carried = f"{line.title} {line.hook}" if missing else line.hook
        else:
            continue
        if says_something(carried):
            found.append(carried)
    return found


def _sights(tree: dict[str, bytes]) -> tuple[str, list[frozenset[str]]]:
    """What the agent reads at session start (MEMORY.md, normalized), and the words of each indexed
    memory: an index link line with the topic file it points to (not the archive)."""
    index = _index(tree)
    memories = []
    for text in index:
        line = parse_index_line(text)
        resolved = resolve_link(INDEX_NAME, line.target) if line.kind == "link" else None
        if resolved in tree and "archive" not in resolved.rsplit("/", 1)[-1]:
            memories.append(word_keys(f"{line.title} {line.hook}\n" + tree[resolved].decode("utf-8", "replace")))
    return normalize("\n".join(index)), memories


def rules_out_of_index(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    """Rule-bearing lines whose text is neither in MEMORY.md nor, word for word, in one indexed memory."""
    index, memories = _sights(after)
    return [text for text in rule_bearing(before)
            if normalize(text) not in index and not any(content_keys(text) <= words for words in memories)]


def descriptions_as_name(before: dict[str, bytes], after: dict[str, bytes]) -> int:
    count = 0
    for path in sorted(set(after)):
        if path == INDEX_NAME or not path.endswith(".md") or "archive" in path:
            continue
        if path in before and _topic(before, path).frontmatter is not None:
            continue
        topic = _topic(after, path)
        if topic.frontmatter is not None and normalize(topic.description) == normalize(topic.name):
            count += 1
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
        "hook_only": len(hook_only_files(before, after)),
        "hook_labelled": len(hook_only_files(before, after, labelled=True)),
        "files_changed": sum(1 for p in set(before) & set(after) if p != INDEX_NAME and before[p] != after[p]),
        "rules_out": len(rules_out_of_index(before, after)), "rule_lines": len(rule_bearing(before)),
        "desc_as_name": descriptions_as_name(before, after),
    }


COLUMNS = [("store", "store"), ("files", "files"), ("status", "run"), ("changes", "changes"),
           ("dropped", "facts dropped"), ("merged", "merged"), ("archived", "archived"),
           ("broken", "broken pointers"), ("slugs", "slug titles"), ("prose_to_memory", "prose→memory"),
           ("files_changed", "topic files changed"), ("hook_only", "hook-only files"),
           ("hook_labelled", "labelled hooks"),
           ("rules_out", "rules out of index"), ("desc_as_name", "new description = name"),
           ("needs_person", "needs a person")]


def cell(row: dict, key: str) -> str:
    if key in ("broken", "slugs"):
        return f"{row[key + '_before']} → {row[key + '_after']}"
    if key == "rules_out":
        return f"{row['rules_out']} of {row['rule_lines']}"
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
             "slugs": sum(r["slugs_after"] for r in rows), "prose": sum(r["prose_to_memory"] for r in rows),
             "hook_only": sum(r["hook_only"] for r in rows), "rules_out": sum(r["rules_out"] for r in rows),
             "desc": sum(r["desc_as_name"] for r in rows)}
    print(f"\n{len(rows)} stores: {total['dropped']} facts dropped, {total['broken']} broken pointers, "
          f"{total['slugs']} slug titles, {total['prose']} index prose lines made into memories, "
          f"{total['hook_only']} topic files changed only to carry an index hook, "
          f"{total['rules_out']} rule-bearing index lines out of the index, "
          f"{total['desc']} new descriptions repeating the name (after accept)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
