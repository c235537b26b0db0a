"""The HTML review page, opened in headless Chromium (Debian's package, driven by Playwright).

No browser is ever downloaded: the tests use /usr/bin/chromium, which
`.ci/run` installs. They skip when it is missing on a developer's machine,
but never in CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from dream.review.page import render
from dream.store.layout import Layout
from dream.versions.proposals import Proposals

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

pytestmark = [
    pytest.mark.slow,  # a browser start and a page load per test
    pytest.mark.skipif(not CHROMIUM.exists() and not os.environ.get("CI"), reason="needs Debian's chromium package"),
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        yield b
        b.close()


def open_page(browser, html: Path, requests: list[str]):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.on("request", lambda r: requests.append(r.url))
    page.goto(html.resolve().as_uri())
    return page


def test_demo_page_shows_counts_and_retention(browser, demo_store, cli, tmp_path):
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    html = tmp_path / "review.html"
    res = cli("diff", pid, "--store", str(demo_store), "--html", str(html), "--json")
    assert res.code == 0, res.stderr
    report = res.json["report"]
    requests: list[str] = []
    page = open_page(browser, html, requests)

    counts = res.json["counts"]  # the numbers `dream diff --json` gives, card for card
    assert page.inner_text("#count-dropped") == str(report["retention"]["dropped"]) == "5"
    for key in ("merged", "archived", "rewritten", "kept", "changes"):
        assert page.inner_text(f"#count-{key}") == str(counts[key]), key
    assert page.inner_text("#count-files") == str(len(report["files_changed"]))
    assert page.inner_text("#engine") == "offline"
    assert page.inner_text("#tokens") == "0 in / 0 out"
    assert page.is_visible("#dropped-table")
    assert "reference_jenkins.md" in page.inner_text("#dropped-table")

    # Side by side: the deleted duplicate's lines are on the left only.
    index = page.locator("#file-index a", has_text="webhook_retries.md").first
    index.click()
    target = page.locator("details.file", has_text="webhook_retries.md deleted")
    assert target.locator("tr.delete td.l").first.is_visible()  # a removal: open without a click

    page.screenshot(path=str(tmp_path / "review.png"), full_page=True)
    assert (tmp_path / "review.png").stat().st_size > 10_000
    assert all(url.startswith("file://") for url in requests), requests  # no network fetches
    page.close()


def test_page_has_no_external_references(demo_store, cli, tmp_path):
    cli("run", "--store", str(demo_store), "--json")
    html = tmp_path / "page.html"
    cli("diff", "--store", str(demo_store), "--html", str(html))
    text = html.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert "<script" not in text and "@import" not in text and "url(" not in text


def test_two_hundred_files_stay_readable(browser, tmp_path):
    # Each file rewrites one line in place (housekeeping-like: nothing dropped, nothing asked).
    old = {f"topic_{n:03d}.md": f"# Topic {n}\n\nfact {n}\nthe old line {n} of this topic\n".encode() for n in range(200)}
    new = {p: d.replace(b"old line", b"new line") for p, d in old.items()}
    new["MEMORY.md"] = b"# Memory\n"
    html = tmp_path / "big.html"
    html.write_text(render(title="200 files", old=old, new=new))
    requests: list[str] = []
    page = open_page(browser, html, requests)
    assert page.inner_text("#count-files") == "201"
    assert page.locator("#file-index li").count() == 201
    # Every file's diff starts folded, so the page opens on the summary and the index.
    assert page.locator("details.file[open]").count() == 0
    assert page.locator("details.file").count() == 201
    height = page.evaluate("document.body.scrollHeight")
    assert height < 20_000, f"page is {height}px tall with every diff folded"
    # Following a link in the index and opening that file shows its rows side by side.
    page.locator("#file-index a", has_text="topic_150.md").click()
    chosen = page.locator("details.file", has_text="topic_150.md")
    chosen.locator("summary").click()
    row = chosen.locator("tr.replace").first
    assert row.is_visible()
    assert "old line 150" in row.locator("td.l").inner_text()
    assert "new line 150" in row.locator("td.r").inner_text()
    page.screenshot(path=str(tmp_path / "big.png"))
    assert all(url.startswith("file://") for url in requests)
    page.close()


def test_screenshot_script_runs(tmp_path):
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[2]
    png = tmp_path / "shot.png"
    res = subprocess.run([sys.executable, str(repo / "scripts" / "screenshot_review.py"), str(png)],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert png.stat().st_size > 10_000


def test_what_needs_a_decision_is_open_and_housekeeping_folded_at_1280(browser, demo_store, cli, tmp_path):
    """Changes that need a person, request-derived changes and removals open; housekeeping folded; no
    horizontal scrollbar anywhere at 1280 px (the retention table sat in a scroll box)."""
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    html = tmp_path / "review.html"
    shown = cli("diff", pid, "--store", str(demo_store), "--html", str(html), "--json").json
    changes = shown["report"]["changes"]
    requested = {c["path"] for c in changes if c["kind"] == "request"}
    removed = {i["path"] for i in shown["retention"]["items"] if i["status"] == "dropped"}
    proposed = Proposals(Layout.open(demo_store)).tree(Proposals(Layout.open(demo_store)).get(pid))
    removed |= {p for p in shown["files_changed"] if p not in proposed}  # deleted files
    asked = {p for p in shown["files_changed"] for q in shown["report"]["needs_person"] if p in q}
    must_read = requested | removed | asked
    assert {"reference_jenkins.md", "webhook_retries.md"} <= must_read  # "next Friday" is asked about, not rewritten
    requests: list[str] = []
    page = open_page(browser, html, requests)
    opened = {page.locator("details.file[open] > summary code").nth(n).inner_text()
              for n in range(page.locator("details.file[open]").count())}
    folded = {page.locator("details.file:not([open]) > summary code").nth(n).inner_text()
              for n in range(page.locator("details.file:not([open])").count())}
    assert opened == must_read & set(shown["files_changed"])
    assert folded == set(shown["files_changed"]) - must_read and folded
    assert page.locator("#housekeeping-changes[open]").count() == 0  # housekeeping: folded
    assert page.locator("#requests-table tr").count() == 1 + sum(c["kind"] == "request" for c in changes)
    # Every request shows the sentence it came from, with its session, date and line.
    first = next(c for c in changes if c["kind"] == "request")
    row = page.locator("#requests-table tr", has_text=first["evidence"]["sentence"]).first
    assert f"line {first['evidence']['line']}" in row.inner_text() and first["evidence"]["date"] in row.inner_text()
    # Needs a person, then the dropped lines, then the rest (requests, files to read), housekeeping last (#39).
    top = {name: page.locator(name).bounding_box()["y"] for name in
           ("#needs-person", "#requests", "#dropped", "#to-read", "#retention", "#housekeeping")}
    assert top["#needs-person"] < top["#dropped"] < top["#requests"] < top["#to-read"] < top["#housekeeping"]
    wide = page.evaluate("""[...document.querySelectorAll('*')].filter(e => e.scrollWidth > e.clientWidth + 1
                            && getComputedStyle(e).overflowX !== 'visible').map(e => e.tagName + '#' + e.id)""")
    assert wide == [] and page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert all(url.startswith("file://") for url in requests)
    page.close()


def test_a_large_move_out_of_the_index_is_shown_first_and_loud_with_memory_md_open(browser, tmp_path, cli):
    """Issue 39: in a big store, lines moved out of the index were not highlighted and MEMORY.md was folded."""
    store = tmp_path / "kiosks"
    store.mkdir()
    index = []
    for n in range(320):
        (store / f"project_kiosk_{n:03d}.md").write_text(
            f"---\nname: Kiosk {n}\ndescription: kiosk {n}\ntype: project\n---\n\nKiosk {n} sits in hall {n % 7}.\n")
        index.append(f"- [Kiosk {n}](project_kiosk_{n:03d}.md) — kiosk {n} sits in hall {n % 7}")
    (store / "MEMORY.md").write_text("\n".join(index) + "\n")
    assert cli("run", "--store", str(store), "--engine", "offline", "--force").code == 0
    html = tmp_path / "kiosks.html"
    shown = cli("diff", "--store", str(store), "--html", str(html), "--json").json
    moved = shown["counts"]["archived"]
    assert moved >= 100, shown["counts"]

    requests: list[str] = []
    page = open_page(browser, html, requests)
    assert page.inner_text("#count-archived") == str(moved)
    assert "many" in page.get_attribute("#card-archived", "class").split()
    assert "many" in page.get_attribute("#moved-out", "class").split()
    assert page.inner_text("#moved-out") == f"Moved out of the index ({moved})"
    assert page.locator("#moved-out-table tr").count() == moved + 1
    top = {name: page.locator(name).bounding_box()["y"]
           for name in ("#dropped", "#moved-out", "#to-read", "#retention")}
    assert top["#dropped"] < top["#moved-out"] < top["#to-read"] < top["#retention"]
    opened = [page.locator("details.file[open] > summary code").nth(n).inner_text()
              for n in range(page.locator("details.file[open]").count())]
    assert "MEMORY.md" in opened  # losing index lines is never folded away
    page.close()


def test_the_reads_table_is_folded_when_no_transcript_shows_a_read(browser, home, tmp_path, cli):
    from helpers.claude_home import claude_project

    memory = claude_project(home, project="-home-me-till", sessions=5)
    assert cli("run", "--store", str(memory), "--engine", "offline").code == 0
    html = tmp_path / "till.html"
    report = cli("diff", "--store", str(memory), "--html", str(html), "--json").json["report"]
    assert report["memory_reads"] and not any(seen["reads"] for seen in report["memory_reads"].values())

    requests: list[str] = []
    page = open_page(browser, html, requests)
    assert page.locator("#reads-details[open]").count() == 0 and not page.locator("#reads-table").is_visible()
    assert page.inner_text("#reads") == f"Read by agents (0 of {len(report['memory_reads'])})"
    assert page.locator("#reads").bounding_box()["y"] > page.locator("#dropped").bounding_box()["y"]


def test_a_note_left_open_by_a_quiet_night_leads_the_next_proposals_page_with_its_commands(browser, tmp_path, cli):
    """A noop night's note for a person (dream.notes) is on the next night's page, above the requests,
    with the command that takes its suggestion; nothing on the page scrolls sideways at 1280 px."""
    store = tmp_path / "memory"
    (store / "logs" / "2026" / "11" / "20").mkdir(parents=True)
    (store / "MEMORY.md").write_text("# Memory\n\n- [Pager](reference_pager.md) — rota in the ops wiki\n")
    (store / "reference_pager.md").write_text("---\nname: Pager\ndescription: rota in the ops wiki\n"
                                              "type: reference\n---\n\nThe pager rota is in the ops wiki.\n")
    (store / "logs" / "2026" / "11" / "20" / "s1-a.md").write_text(
        "> remember that the pager escalates after maybe 25 minutes\n< ok\n")
    assert cli("run", "--store", str(store), "--engine", "offline", "--force", "--json").json["status"] == "noop"
    (store / "logs" / "2026" / "11" / "20" / "s2-b.md").write_text("> forget the pager note, we left that rota\n")
    assert cli("run", "--store", str(store), "--engine", "offline", "--force", "--json").json["status"] == "proposed"
    html = tmp_path / "review.html"
    assert cli("diff", "--store", str(store), "--html", str(html)).code == 0

    requests: list[str] = []
    page = open_page(browser, html, requests)

    note = page.locator("#notes-note-1")
    assert note.is_visible() and "25 minutes" in note.inner_text()
    assert note.locator("code.take").inner_text() == f"dream notes take 1 --store {store.resolve()}"
    assert page.locator("#open-notes").bounding_box()["y"] < page.locator("#requests").bounding_box()["y"]
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert all(url.startswith("file://") for url in requests)
    page.close()
