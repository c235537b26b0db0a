"""Screenshot the overview of pending proposals (`dream status --all --html`) in headless Chromium.

    python scripts/screenshot_overview.py out.png                  # three copies of the demo, two dreamed
    python scripts/screenshot_overview.py out.png --root DIR ...   # the stores under your own folders

Like scripts/screenshot_review.py (whose browser setup it uses): needs
`playwright` (pip) and `chromium` (apt-get install chromium). With
`--proposal-png P` it also follows the first proposal's link and
screenshots that page, to show the two are linked.
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _review_script():
    spec = importlib.util.spec_from_file_location("screenshot_review", Path(__file__).with_name("screenshot_review.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def demo_fleet(workdir: Path) -> list[Path]:
    """Three projects' stores under one root: two dreamed (a proposal each), one not."""
    from dream.pipeline import run as pipeline

    root = workdir / "projects"
    names = ("-home-dev-payments-api", "-home-dev-payments-web", "-home-dev-notes")
    stores = [root / name / "memory" for name in names]
    for store in stores:
        shutil.copytree(REPO / "data" / "demo", store, ignore=shutil.ignore_patterns(".dream"))
    for store in stores[:2]:
        pipeline.run(store, engine="offline", force=True)
    return [root]


def write_overview(roots: list[Path], html: Path):
    from dream.cli.console import common_root, project_names
    from dream.transcripts.discover import discover_stores
    from dream.review.overview import write_overview as write
    from dream.pipeline.status import store_row

    stores = discover_stores(roots)  # only these roots: a screenshot never shows the machine's own stores
    return write(html, [store_row(s) for s in stores], project_names(stores), common_root(stores))


def screenshot(html: Path, png: Path, proposal_png: Path | None) -> None:
    from playwright.sync_api import sync_playwright

    review = _review_script()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=review.CHROMIUM, args=review.CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.goto(html.resolve().as_uri())
            page.screenshot(path=str(png), full_page=True)
            if proposal_png is not None:
                page.locator("#proposals a").first.click()
                page.wait_for_selector("#count-dropped")
                page.screenshot(path=str(proposal_png))
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png", type=Path)
    parser.add_argument("--root", type=Path, action="append", help="a folder of stores (repeatable)")
    parser.add_argument("--proposal-png", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        roots = args.root or demo_fleet(Path(tmp))
        overview = write_overview(roots, Path(tmp) / "overview.html")
        screenshot(overview.html, args.png, args.proposal_png)
    print(args.png)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    raise SystemExit(main())
