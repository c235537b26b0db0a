"""`dream lint`: check what the memories claim about their project against the project."""

from __future__ import annotations

from pathlib import Path

import typer

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, say
from dream.errors import BadInput


@app.command("lint")
def lint_cmd(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Check the paths, commands, names and dependencies the memories cite; exit 1 when one fails."""
    from dream.config import load_settings  # start-up: see dream/cli/__init__.py
    from dream.lint import lint_store  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.store.tree import read_tree  # start-up: see dream/cli/__init__.py

    layout = Layout.open(store)
    settings = load_settings(layout.root)
    report = lint_store(layout.root, read_tree(layout.root), settings)
    if report is None:
        raise BadInput(f"{layout.root}: no project known for this store (no transcript names its folder); "
                       "set project = PATH in .dream/config.toml")
    if as_json:
        emit_json(report.as_json())
    else:
        _print(report)
    if report.findings:
        raise typer.Exit(1)


def _print(report) -> None:
    at = f" at {report.head}" if report.head else ""
    say(f"project  {report.project}{at} (from {report.found_by})")
    say(f"claims   {report.claims} in {report.memories} memories: {report.held} held, "
        f"{len(report.findings)} failed, {report.unchecked} not checked in {report.seconds} s")
    for finding in report.findings:
        say(f"- {finding.sentence()}")
