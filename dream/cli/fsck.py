"""`dream fsck`: read back every object, pack, version and proposal; say what is damaged and what is whole."""

from __future__ import annotations

from pathlib import Path

from dream.cli.app import JsonOpt, StoreOpt, app
from dream.cli.console import emit_json, say


@app.command("fsck")
def fsck_cmd(store: StoreOpt = Path("."), as_json: JsonOpt = False) -> None:
    """Check every stored object, pack, version and proposal; exit 2 naming what is damaged, 0 when all is whole."""
    from dream.store.layout import Layout  # start-up: see dream/cli/__init__.py
    from dream.store.records import DamagedRecord  # start-up: see dream/cli/__init__.py
    from dream.versions.fsck import check, ranges  # start-up: see dream/cli/__init__.py

    layout = Layout.open(store)
    report = check(layout)
    if as_json:
        emit_json(report.as_json())
    else:
        whole, hurt = report.whole, report.hurt
        say(f"checked {report.objects} objects ({report.packs} pack files), "
            f"{len(whole['versions']) + len(hurt['versions'])} versions, "
            f"{len(whole['proposals']) + len(hurt['proposals'])} proposals")
        for damage in report.damaged:
            needed = ", ".join(damage.needed_by) or "no version or proposal (it can go)"
            say(f"damaged: {damage.what}: {damage.problem}; needed by {needed}")
        say(f"whole: versions {ranges([int(n) for n in whole['versions']]) or 'none'}; "
            f"proposals {', '.join(whole['proposals']) or 'none'}")
        for kind, lost_by_key in hurt.items():
            for key, lost in lost_by_key.items():
                say(f"{kind[:-1]} {key}: cannot read {', '.join(lost)}; its other files can still be read")
    if not report.ok:
        raise DamagedRecord(f"{layout.dream}: {len(report.damaged)} damaged file(s), named above; the versions "
                            f"and proposals called whole are unaffected")
