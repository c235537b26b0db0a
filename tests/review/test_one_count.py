"""One count everywhere: the demo's proposal as the report, `dream diff --json`, the HTML page and a
`dream review` transcript says the same numbers, and "kept" means unchanged (#26)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

LINE_WORDS = {"dropped": "dropped", "merged": "merged into another file",
              "archived": r"moved out of the index \(archived\)", "rewritten": "rewritten in place",
              "kept": "kept unchanged"}


def line_counts(text: str) -> dict[str, int]:
    """The five line counts from a sentence `5 dropped, 5 merged into another file, …`."""
    found = {}
    for key, words in LINE_WORDS.items():
        match = re.search(rf"(\d+) {words}", text)
        assert match, f"no count of {key} lines in {text!r}"
        found[key] = int(match.group(1))
    return found


def change_counts(text: str) -> dict[str, int]:
    match = re.search(r"(\d+) change\(s\).* in (\d+) file\(s\)(?:; (\d+) need a person)?", text)
    assert match, text
    return {"changes": int(match.group(1)), "files": int(match.group(2)), "needs_person": int(match.group(3) or 0)}


class Ids(HTMLParser):
    """The text of every element with an id, as a browser would show it (tags dropped)."""

    def __init__(self) -> None:
        super().__init__()
        self.text: dict[str, str] = {}
        self.open: list[str | None] = []

    def handle_starttag(self, tag, attrs):
        if tag not in ("br", "col", "meta", "img", "input"):
            self.open.append(dict(attrs).get("id"))

    def handle_endtag(self, tag):
        if self.open:
            self.open.pop()

    def handle_data(self, data):
        for name in self.open:
            if name:
                self.text[name] = self.text.get(name, "") + data


def page_counts(html: str) -> dict[str, int]:
    ids = Ids()
    ids.feed(html)
    number = {key: int(ids.text[f"count-{key}"]) for key in
              ("dropped", "merged", "archived", "rewritten", "kept", "changes", "files")}
    assert line_counts(" ".join(ids.text["retention-counts"].split())) == {k: number[k] for k in LINE_WORDS}
    number["needs_person"] = int(re.search(r"\((\d+)\)", ids.text.get("needs-person", "(0)")).group(1))
    return number


def test_report_json_page_and_review_say_the_same_counts(demo_store: Path, cli, tmp_path: Path) -> None:
    pid = cli("run", "--store", str(demo_store), "--engine", "offline", "--json").json["proposal_id"]
    shown = cli("diff", pid, "--store", str(demo_store), "--json").json
    counts, retention, report = shown["counts"], shown["retention"], shown["report"]

    # The JSON: counts follow from the items (a line is counted once) and from the report's changes.
    statuses = [i["status"] for i in retention["items"]]
    assert {k: counts[k] for k in LINE_WORDS} == {k: statuses.count(k) for k in LINE_WORDS}
    assert counts["changes"] == len(report["changes"]) + len(report["finish"])
    # 20: "next Friday" in a Wednesday's file is left as written; the reworded duplicate feedback_test_before_push.md
    # is merged into feedback_run_tests.md (both files change)
    assert counts["files"] == len(shown["files_changed"]) == 20
    assert counts["dropped"] == shown["dropped"] == 5 and counts["needs_person"] == len(report["needs_person"])

    # The report, as `dream diff` prints it.
    text = cli("diff", pid, "--store", str(demo_store)).stdout
    assert line_counts(re.search(r"^- lines: (.*)$", text, re.M).group(1)) == {k: counts[k] for k in LINE_WORDS}
    assert line_counts(re.search(r"^## Retention: (.*)$", text, re.M).group(1)) == {k: counts[k] for k in LINE_WORDS}
    assert change_counts(text) == {k: counts[k] for k in ("changes", "files", "needs_person")}
    assert f"## Dropped ({counts['dropped']})" in text
    changes_section = text.split("\n## Changes\n", 1)[1].split("\n## ", 1)[0]
    assert len(re.findall(r"^- \*\*", changes_section, re.M)) == counts["changes"]

    # The HTML page.
    html = tmp_path / "review.html"
    assert cli("diff", pid, "--store", str(demo_store), "--html", str(html)).code == 0
    assert page_counts(html.read_text(encoding="utf-8")) == {
        k: counts[k] for k in ("dropped", "merged", "archived", "rewritten", "kept", "changes", "files", "needs_person")}

    # `dream review`, answered from a pipe: skip every file, then quit without writing.
    answers = "n\n" * counts["files"] + "q\n"
    review = cli("review", pid, "--store", str(demo_store), input=answers)
    assert review.code == 0, review.stderr
    heading = re.search(rf"^proposal {pid}: (.*)$", review.stdout, re.M).group(1)
    assert line_counts(heading) == {k: counts[k] for k in LINE_WORDS}
    assert change_counts(heading) == {k: counts[k] for k in ("changes", "files", "needs_person")}
    per_file = [int(n) for n in re.findall(r"^drops (\d+) line\(s\) of ", review.stdout, re.M)]
    assert sum(per_file) == counts["dropped"]
    assert re.findall(r" \d+/(\d+)  ", review.stdout) == [str(counts["files"])] * counts["files"]  # a question each


def test_a_line_changed_in_place_is_rewritten_not_kept(demo_store: Path, cli) -> None:
    """Postgres 15 → 16 is a rewrite; the report names the words the file now holds."""
    cli("run", "--store", str(demo_store), "--engine", "offline", "--json")
    retention = cli("diff", "--store", str(demo_store), "--json").json["retention"]
    database = [i for i in retention["items"] if i["path"] == "project_database.md"]
    assert database and all(i["status"] == "rewritten" for i in database)
    assert any("Postgres 16" in i["now"] for i in database)
    assert not any(i["status"] == "kept" and "Postgres 15" in i["text"] for i in retention["items"])


def test_the_report_names_the_words_the_file_now_holds(demo_store: Path, cli) -> None:
    """Not `last week → 2026-W42` when the file says "in the week of 2026-10-12"."""
    cli("run", "--store", str(demo_store), "--engine", "offline", "--json")
    text = cli("diff", "--store", str(demo_store)).stdout
    new_line = next(line for line in (demo_store / ".dream").parent.joinpath("project_rounding_rule.md")
                    .read_text().splitlines() if "last week" in line)  # the store is not changed before accept
    dated = re.search(r"^- \*\*dated\*\* `project_rounding_rule\.md`: .*$", text, re.M).group(0)
    assert "2026-W42" not in dated
    assert "“last week” → “in the week of 2026-10-12”" in dated
    proposed = cli("diff", "--store", str(demo_store), "--json").json["diff"]
    assert "+" + new_line.replace("last week", "in the week of 2026-10-12") in proposed.splitlines()
