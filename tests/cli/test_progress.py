"""Progress on a terminal only: the stages and the stores done while they run; nothing with --json or a pipe."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pexpect
from helpers.cli import terminal_env
from helpers.stores import DEMO


def stores(root: Path, n: int) -> list[Path]:
    made = []
    for i in range(n):
        store = root / f"-work-p{i}" / "memory"
        shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
        made.append(store)
    return made


def in_a_terminal(*args: str) -> tuple[int, str]:
    child = pexpect.spawn(sys.executable, ["-m", "dream", *args], env=terminal_env(),
                          encoding="utf-8", timeout=180, dimensions=(40, 120))
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, child.before


def text(screen: str) -> str:
    """The screen without colours and cursor moves."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)


def test_a_run_on_a_terminal_shows_its_stages(demo_store: Path) -> None:
    code, screen = in_a_terminal("run", "--store", str(demo_store), "--engine", "offline")
    assert code == 0, screen
    for stage in ("gate", "snapshot", "gather", "consolidate", "validate", "propose"):
        assert stage in screen, stage
    assert "proposed  engine=offline" in text(screen)


def test_a_fleet_run_on_a_terminal_counts_the_stores_done(tmp_path: Path) -> None:
    stores(tmp_path / "root", 2)
    code, screen = in_a_terminal("run", "--all", "--root", str(tmp_path / "root"), "--engine", "offline")
    assert code == 0, screen
    assert "stores done" in screen and "2 proposed" in text(screen)


def test_json_on_a_terminal_is_only_the_json(tmp_path: Path) -> None:
    (store,) = stores(tmp_path / "root", 1)
    code, screen = in_a_terminal("run", "--store", str(store), "--engine", "offline", "--force", "--json")
    assert code == 0 and json.loads(screen)["status"] == "proposed"  # no bar, no escape sequence
    code, screen = in_a_terminal("run", "--all", "--root", str(tmp_path / "root"), "--force", "--json")
    assert code == 0 and json.loads(screen)["counts"]["noop"] == 1


def test_nothing_but_the_result_when_the_output_is_not_a_terminal(tmp_path: Path, cli) -> None:
    (store,) = stores(tmp_path / "root", 1)
    one = cli("run", "--store", str(store), "--engine", "offline")
    fleet = cli("run", "--all", "--root", str(tmp_path / "root"), "--force")
    assert one.code == fleet.code == 0
    assert one.stderr == fleet.stderr == ""
    assert "stores done" not in one.stdout + fleet.stdout and "\x1b" not in one.stdout + fleet.stdout
