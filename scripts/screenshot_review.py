"""Screenshot dream's HTML review page in headless Chromium (Debian's package, no browser download).

    python scripts/screenshot_review.py out.png                 # the demo store, dreamed in a temp copy
    python scripts/screenshot_review.py out.png --store STORE   # a proposal of your own store
    python scripts/screenshot_review.py out.png --html page.html  # an existing page
    python scripts/screenshot_review.py out.png --top 1600      # only what a reviewer sees first

Needs `playwright` (pip) and `chromium` (apt-get install chromium).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Playwright starts each browser on a fresh temporary profile (its own --user-data-dir).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def demo_page(workdir: Path) -> Path:
    """Dream once on a copy of data/demo and write its review page."""
    from dream.pipeline import run as pipeline
    from dream.review.page import proposal_page, write_page
    from dream.store.layout import Layout
    from dream.versions.proposals import Proposals

    store = workdir / "demo"
    shutil.copytree(REPO / "data" / "demo", store, ignore=shutil.ignore_patterns(".dream"))
    outcome = pipeline.run(store, engine="offline", force=True)
    layout = Layout.open(store)
    return write_page(workdir / "review.html", proposal_page(layout, Proposals(layout).get(outcome.proposal_id)))


def store_page(store: Path, workdir: Path, proposal: str | None) -> Path:
    from dream.review.page import proposal_page, write_page
    from dream.store.layout import Layout
    from dream.versions.proposals import Proposals

    layout = Layout.open(store)
    return write_page(workdir / "review.html", proposal_page(layout, Proposals(layout).resolve(proposal)))


def screenshot(html: Path, png: Path, width: int = 1280, full_page: bool = True, top: int | None = None) -> None:
    """The whole page, or (`top`) only its first `top` pixels: what a reviewer sees first, in a small file."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(html.resolve().as_uri())
            clip = {"x": 0, "y": 0, "width": width, "height": top} if top else None
            page.screenshot(path=str(png), full_page=full_page, clip=clip)
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png", type=Path)
    parser.add_argument("--store", type=Path)
    parser.add_argument("--proposal")
    parser.add_argument("--html", type=Path)
    parser.add_argument("--top", type=int, help="only the first TOP pixels of the page")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if args.html:
            html = args.html
        elif args.store:
            html = store_page(args.store, Path(tmp), args.proposal)
        else:
            html = demo_page(Path(tmp))
        screenshot(html, args.png, top=args.top)
    print(args.png)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
