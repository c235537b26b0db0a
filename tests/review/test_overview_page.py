"""`dream status --all --html FILE`: one self-contained page over every pending proposal, linked to each review page."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.stores import DEMO

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def needs_chromium(test):
    """Slow (a browser start and page loads); skipped without Debian's chromium, except in CI."""
    missing = not CHROMIUM.exists() and not os.environ.get("CI")
    return pytest.mark.slow(pytest.mark.skipif(missing, reason="needs Debian's chromium package")(test))


@pytest.fixture
def morning(home: Path, cli) -> dict:
    """Three projects: two dreamed overnight (a proposal each), one with nothing pending."""
    root = home / ".claude" / "projects"
    for name in ("-work-api", "-work-web", "-nowhere-dream-test-notes"):
        shutil.copytree(DEMO, root / name / "memory", ignore=shutil.ignore_patterns(".dream"))
    proposals = {}
    for name in ("-work-api", "-work-web"):
        store = root / name / "memory"
        ran = cli("run", "--store", str(store), "--engine", "offline", "--json").json
        shown = cli("diff", "--store", str(store), "--json").json
        proposals[ran["proposal_id"]] = {"store": store, "report": shown["report"], "counts": shown["counts"]}
    return proposals


def test_the_overview_lists_every_pending_proposal_with_its_counts_and_page(morning: dict, tmp_path: Path, cli) -> None:
    html = tmp_path / "morning.html"

    result = cli("status", "--all", "--html", str(html), "--json")

    assert result.code == 0, result.stderr
    overview = result.json["overview"]
    assert {p["id"] for p in overview["proposals"]} == set(morning)
    assert overview["stores_without_pending"] == ["nowhere-dream-test-notes"]  # by its project (which does not exist here), not by a path
    text = html.read_text(encoding="utf-8")
    for row in overview["proposals"]:
        counts = morning[row["id"]]["counts"]  # as `dream diff --json` counts them
        assert row["counts"] == {key: counts[key] for key in
                                 ("dropped", "merged", "archived", "rewritten", "changes", "files")}
        assert counts["files"] == len(morning[row["id"]]["report"]["files_changed"])
        page = html.parent / row["href"]
        assert row["href"].startswith("morning-pages/") and page.is_file()
        assert f'href="{row["href"]}"' in text and row["id"] in page.read_text(encoding="utf-8")
        assert 'href="../morning.html"' in page.read_text(encoding="utf-8")  # and back
    for page in [html, *html.parent.glob("morning-pages/*.html")]:  # self-contained, every one
        body = page.read_text(encoding="utf-8")
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", body)
        assert "<script" not in body and "@import" not in body and "url(" not in body

    people = cli("status", "--all", "--html", str(html))
    assert people.code == 0 and people.stdout.startswith(f"overview written to {html}: 2 pending proposal(s) in 2 of 3")


def test_a_claude_code_store_is_named_by_its_project(home: Path, tmp_path: Path, cli) -> None:
    """`-home-me-shop/memory` reads as noise: the overview says `~/shop`."""
    projects = home / ".claude" / "projects"
    folder = str(home).replace("/", "-").replace(".", "-")  # how Claude Code names the project ~/shop
    for project in (f"{folder}-shop", f"{folder}-my-app"):
        store = projects / project / "memory"
        shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
        assert cli("run", "--store", str(store), "--engine", "offline", "--json").code == 0
    html = tmp_path / "morning.html"
    overview = cli("status", "--all", "--html", str(html), "--json").json["overview"]
    assert sorted(p["name"] for p in overview["proposals"]) == ["~/my-app", "~/shop"]
    text = html.read_text(encoding="utf-8")
    assert "<code>~/shop</code>" in text and f"{folder}-shop" not in text.split("<main>", 1)[1].split('title="')[0]


def test_a_missing_folder_is_one_line_and_exit_2(morning: dict, tmp_path: Path, cli) -> None:
    result = cli("status", "--all", "--html", str(tmp_path / "no" / "such.html"))
    assert result.code == 2 and result.stdout == ""
    target = tmp_path / "no" / "such.html"
    assert result.stderr == f"dream: error: {target}: --html folder {target.parent} does not exist\n"


@needs_chromium
def test_the_overview_in_chromium_links_to_each_review_page(morning: dict, tmp_path: Path, cli) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    html = tmp_path / "morning.html"
    overview = cli("status", "--all", "--html", str(html), "--json").json["overview"]
    requests: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(html.resolve().as_uri())
            assert page.inner_text("#total-proposals") == "2"
            total_dropped = sum(p["counts"]["dropped"] for p in overview["proposals"])
            assert page.inner_text("#total-dropped") == str(total_dropped)
            rows = page.locator("tr.proposal")
            assert rows.count() == 2
            first = overview["proposals"][0]
            row = page.locator("tr.proposal", has_text=first["id"])
            assert row.locator(".c-dropped").inner_text() == str(first["counts"]["dropped"])
            assert row.locator(".c-merged").inner_text() == str(first["counts"]["merged"])
            page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)

            assert row.locator(".c-needs-person").inner_text() == str(first["needs_person"])
            row.locator(f'a[href="{first["href"]}"]').click()  # the proposal's link (the needs-a-person count links too)
            page.wait_for_selector("#count-dropped")
            assert first["id"] in page.inner_text("h1")
            assert page.inner_text("#count-dropped") == str(first["counts"]["dropped"])
            page.locator("#back").click()
            page.wait_for_selector("#proposals")
        finally:
            browser.close()
    assert (tmp_path / "overview.png").stat().st_size > 10_000
    assert all(url.startswith("file://") for url in requests), requests  # no network fetches


@needs_chromium
def test_the_screenshot_script_runs(tmp_path: Path) -> None:
    pytest.importorskip("playwright.sync_api")
    png, linked = tmp_path / "overview.png", tmp_path / "proposal.png"
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "screenshot_overview.py"), str(png),
                           "--proposal-png", str(linked)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert png.stat().st_size > 10_000 and linked.stat().st_size > 10_000


def test_the_overview_counts_what_needs_a_person_per_store(morning: dict, tmp_path: Path, cli) -> None:
    """Each pending proposal's row says how many notes for a person its store holds open (`dream notes` lists them)."""
    html = tmp_path / "morning.html"

    overview = cli("status", "--all", "--html", str(html), "--json").json["overview"]

    text = html.read_text(encoding="utf-8")
    assert "<th class=\"num\">needs a person</th>" in text
    for row in overview["proposals"]:
        listed = cli("notes", "--store", str(morning[row["id"]]["store"]), "--json").json
        assert row["needs_person"] == listed["open"] > 0  # the demo leaves dates for a person to write
        assert f'<a href="#open-notes">{listed["open"]}</a>' in text
