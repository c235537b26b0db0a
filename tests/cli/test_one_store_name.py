"""One name for a store everywhere (issue 39): the project's path, as the pages give it.

Observed on main: the command line named a Claude Code store by its folder
(`-home-me-work-shop/memory`) where the overview page said `~/work/shop`.
"""

from __future__ import annotations

from pathlib import Path

from helpers.claude_home import claude_project


def test_status_run_report_history_and_the_page_name_the_store_by_its_project(home: Path, tmp_path: Path,
                                                                              cli) -> None:
    (home / "work" / "till").mkdir(parents=True)  # the project folder Claude Code ran in
    (home / "work" / "kiosk").mkdir(parents=True)
    encoded = str(home.resolve()).replace("/", "-").replace(".", "-")
    for project in ("till", "kiosk"):
        claude_project(home, project=f"{encoded}-work-{project}", sessions=5)

    outputs = {
        "run": cli("run", "--all", "--engine", "offline").stdout,
        "status": cli("status", "--all", env={"COLUMNS": "200"}).stdout,
        "report": cli("report", "--all", env={"COLUMNS": "200"}).stdout,
        "history": cli("history", "--all", env={"COLUMNS": "200"}).stdout,
    }
    for command, text in outputs.items():
        for project in ("till", "kiosk"):
            assert f"~/work/{project}" in text, (command, text)
            assert f"-work-{project}/memory" not in text, (command, text)

    page = tmp_path / "overview.html"
    assert cli("status", "--all", "--html", str(page)).code == 0
    html = page.read_text(encoding="utf-8")
    assert all(f"<code>~/work/{project}</code>" in html for project in ("till", "kiosk")), html
