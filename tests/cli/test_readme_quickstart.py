"""The README's Quick start, as written, dreams on a copy and leaves the shipped demo untouched."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

from helpers.cli import console_script
from helpers.stores import DEMO, snapshot_bytes

REPO = Path(__file__).resolve().parents[2]


def quick_start_blocks() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, re.S)


def as_run_here(command: str, copy: Path) -> str:
    """The command without making the venv (this one is installed), its `dream` and copy put in."""
    steps = [s for s in command.split(" && ") if not s.startswith("python3 -m venv") and "pip install" not in s]
    dream = " ".join(map(shlex.quote, console_script()))
    return " && ".join(steps).replace(".venv/bin/dream", dream).replace("/tmp/dream-demo", str(copy))


def test_the_demo_and_accept_blocks_leave_data_demo_as_shipped(tmp_path: Path) -> None:
    demo, _tests, accept = quick_start_blocks()
    assert "cp -r data/demo /tmp/dream-demo" in demo and "--store data/demo" not in "".join(quick_start_blocks())
    before = snapshot_bytes(DEMO)
    copy = tmp_path / "dream-demo"
    env = {**os.environ, "COLUMNS": "100"}

    for block in (demo, accept):
        lines = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
        done = subprocess.run(["/bin/sh", "-ec", as_run_here(" && ".join(lines), copy)], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr

    assert "rolled back to version 1; the store is now version 3" in done.stdout
    assert snapshot_bytes(DEMO) == before and not (DEMO / ".dream").exists()
    assert (copy / ".dream").is_dir()
