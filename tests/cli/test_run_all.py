"""`dream run --all`: every store the fleet listing finds, gated, the due ones dreamed, one row each."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

from helpers.cli import console_script
from helpers.fleet_factory import small_store
from helpers.stores import DEMO

from dream.store.layout import Layout
from dream.store.lock import store_lock
from dream.versions.proposals import Proposals


def demo_copy(store: Path) -> Path:
    shutil.copytree(DEMO, store, ignore=shutil.ignore_patterns(".dream"))
    return store


def three_stores(root: Path) -> dict[str, Path]:
    """One due, one closed by the gate (dreamed an hour ago), one due but locked by another run."""
    stores = {"due": demo_copy(root / "-work-api" / "memory"), "locked": demo_copy(root / "-work-web" / "memory")}
    small_store(root / "-work-cli" / "memory", "hours", time.time())
    stores["gate"] = root / "-work-cli" / "memory"
    return {kind: path.resolve() for kind, path in stores.items()}


def test_one_proposal_one_gate_skip_one_lock_skip_in_one_json_object(home: Path, tmp_path: Path, cli) -> None:
    stores = three_stores(tmp_path / "root")

    with store_lock(Layout.open(stores["locked"]), "held-by-test"):
        result = cli("run", "--all", "--root", str(tmp_path / "root"), "--engine", "offline", "--json")

    assert result.code == 0, result.stderr
    rows = {row["store"]: row for row in result.json["stores"]}
    assert sorted(rows) == sorted(map(str, stores.values()))
    due, gate, locked = (rows[str(stores[k])] for k in ("due", "gate", "locked"))
    assert due["status"] == "proposed" and due["proposal"] and due["changes"] > 0
    assert Proposals(Layout.open(stores["due"])).get(due["proposal"]).status == "pending"
    assert (gate["status"], gate["reason"], gate["proposal"]) == ("skipped", "hours", None)
    assert (locked["status"], locked["reason"], locked["proposal"]) == ("skipped", "lock", None)
    assert "held-by-test" in locked["message"]
    assert result.json["counts"] == {"proposed": 1, "noop": 0, "skipped": 2, "failed": 0}
    assert not (stores["gate"] / ".dream" / "history.jsonl").exists()  # a closed gate costs no run record


def test_one_line_per_store_and_exit_1_only_when_a_store_failed(home: Path, tmp_path: Path, cli) -> None:
    root = tmp_path / "root"
    demo_copy(root / "-work-api" / "memory")
    broken = root / "-work-bad" / "memory"
    (broken / ".dream").mkdir(parents=True)
    (broken / "MEMORY.md").write_text("- [A](a.md) — a\n")

    fine = cli("run", "--all", "--root", str(root), "--engine", "offline")
    assert fine.code == 0, fine.stderr
    lines = fine.stdout.splitlines()
    assert lines[0].startswith("dream run --all at ") and lines[0].endswith("2 store(s)")
    body = sorted(lines[1:-1])  # a line per store, never wrapped (a log is grepped line by line)
    assert len(body) == 2, lines
    assert body[0].startswith("proposed ") and " work-api  proposal " in body[0]
    assert body[1].startswith("skipped (sessions) ")
    assert " work-bad  no session logs in logs/ yet: `dream import" in body[1]
    assert lines[-1] == "1 proposed, 1 skipped"

    (broken / ".dream" / "config.toml").write_text("min_sessions = 'many'\n")
    failing = cli("run", "--all", "--root", str(root), "--engine", "offline", "--json")
    assert failing.code == 1
    rows = {Path(r["store"]).parent.name: r for r in failing.json["stores"]}
    assert rows["-work-bad"]["status"] == "failed" and "min_sessions" in rows["-work-bad"]["message"]
    assert rows["-work-api"]["status"] == "skipped"  # dreamed a moment ago: the other store still ran


def test_setting_overrides_gate_every_store(home: Path, tmp_path: Path, cli) -> None:
    root = tmp_path / "root"
    small_store(root / "-work-cli" / "memory", "hours", time.time())  # dreamed an hour ago, six sessions since

    closed = cli("run", "--all", "--root", str(root), "--engine", "offline", "--json")
    opened = cli("run", "--all", "--root", str(root), "--engine", "offline", "--min-hours", "0.5", "--json")

    assert [r["reason"] for r in closed.json["stores"]] == ["hours"]
    # the gate opened and the engine ran (the small store's sessions ask for nothing: no changes)
    assert [(r["status"], r["reason"]) for r in opened.json["stores"]] == [("noop", "no_changes")], opened.json


def test_no_stores_is_not_an_error(home: Path, tmp_path: Path, cli) -> None:
    result = cli("run", "--all", "--json")
    assert result.code == 0 and result.json["stores"] == []


def crontab_line() -> str:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (line,) = [line for line in readme.splitlines() if line.startswith("0 3 * * * ")]
    return line


def test_the_readme_crontab_line_dreams_and_logs_to_a_file(home: Path, tmp_path: Path) -> None:
    """The line as a user pastes it, run by `sh` with cron's bare environment, the venv's path put in."""
    store = demo_copy(home / ".claude" / "projects" / "-work-api" / "memory")
    schedule, command = crontab_line()[:10], crontab_line()[10:]
    assert schedule == "0 3 * * * " and "/path/to/dream/.venv/bin/dream run --all" in command
    command = command.replace("/path/to/dream/.venv/bin/dream", " ".join(map(shlex.quote, console_script())))
    cron_env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "LOGNAME": "dev",
                "DREAM_CONFIG": os.environ["DREAM_CONFIG"]}
    if "PYTHONPATH" in os.environ:  # a checkout that is not the one installed in the venv
        cron_env["PYTHONPATH"] = os.environ["PYTHONPATH"]

    for _ in range(2):  # the second night appends to the log
        done = subprocess.run(["/bin/sh", "-c", command], env=cron_env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0 and done.stdout == done.stderr == "", done.stderr

    log = (home / "dream-cron.log").read_text().splitlines()
    assert len([line for line in log if line.startswith("dream run --all at ")]) == 2
    assert any(line.startswith("proposed ") for line in log), log
    assert any(line.startswith("skipped (hours) ") for line in log), log
    assert len(Proposals(Layout.open(store)).all()) == 1
