"""Screenshot the Prefect UI's resume form of a dream run paused for review, in headless Chromium.

    python scripts/screenshot_prefect_resume.py docs/prefect-resume-form.png

Starts a throwaway Prefect server (its own PREFECT_HOME and port, UI on),
dreams a copy of data/demo with `dream-store` and `review="pause"`, opens
the paused flow run's page, presses **Resume** and screenshots the form
(`decision`, `comment`). Then it answers with `dream accept`, which resumes
the run, and stops everything. Needs `playwright` (pip) and `chromium`
(apt-get install chromium), like scripts/screenshot_review.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
FLOW = ("import sys; from flows.dream_store import dream_store; "
        "dream_store(sys.argv[1], engine='offline', review='pause', review_timeout=900)")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(what: str, check, timeout: float = 240):
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = check()
        if found:
            return found
        time.sleep(1)
    raise SystemExit(f"screenshot_prefect_resume: gave up waiting for {what}")


def healthy(api: str) -> bool:
    try:
        return httpx.get(f"{api}/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def paused_run(api: str) -> dict | None:
    runs = httpx.post(f"{api}/flow_runs/filter", json={"flow_runs": {"state": {"type": {"any_": ["PAUSED"]}}}},
                      timeout=30).json()
    return runs[0] if runs else None


def screenshot_form(ui: str, run_id: str, png: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{ui}/runs/flow-run/{run_id}")
            page.get_by_role("button", name="Resume").first.click()
            page.get_by_text("decision").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1000)  # let the modal finish its transition before the picture
            page.screenshot(path=str(png))
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png", type=Path)
    args = parser.parse_args()
    port = free_port()
    ui, api = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{port}/api"
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
               "PREFECT_HOME": str(home / ".prefect"), "PREFECT_API_URL": api, "PREFECT_UI_ENABLED": "true",
               "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "DREAM_CONFIG": str(home / "config.toml"),
               "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
        env.pop("ANTHROPIC_API_KEY", None)
        store = home / "demo"
        shutil.copytree(REPO / "data" / "demo", store, ignore=shutil.ignore_patterns(".dream"))
        log = open(home / "server.log", "w")
        server = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                                   "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT)
        flow = None
        try:
            wait_for("the Prefect server", lambda: healthy(api))
            flow = subprocess.Popen([sys.executable, "-c", FLOW, str(store)], env=env, cwd=REPO,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            run = wait_for("the flow run to pause", lambda: paused_run(api))
            screenshot_form(ui, run["id"], args.png)
            subprocess.run([sys.executable, "-m", "dream", "accept", "--store", str(store), "-m", "screenshot taken"],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            flow.wait(timeout=120)
        finally:
            for proc in (flow, server):
                if proc is not None and proc.poll() is None:
                    proc.terminate()
                    proc.wait(timeout=30)
            log.close()
    print(args.png)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
