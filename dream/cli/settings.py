"""`dream config`: the settings in force for a store, and where each comes from."""

from __future__ import annotations

from pathlib import Path

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, human, out, table


@app.command("config")
def show_config(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Show the settings in force for a store and where each one comes from."""
    from dream.config import load_settings, setting_sources  # start-up: see dream/cli/__init__.py
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py

    layout = Layout.open(store)
    settings = load_settings(layout.root).as_dict()
    sources = setting_sources(layout.root)
    if as_json:
        emit_json({"settings": settings, "sources": sources})
        return
    rows = [[name, setting_text(value), sources[name]] for name, value in settings.items()]
    out.print(table("settings", ["setting", "value", "from"], rows, wrap=("value",)))


def setting_text(value: object) -> str:
    """A setting as it would be written in config.toml, strings bare: `true`, `24`, `auto`."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "true" if value else "false"
    return human(value)
