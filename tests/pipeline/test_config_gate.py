"""Settings precedence and the gate's reasons."""

from __future__ import annotations

import os
import time

import pytest

from dream.config import load_settings
from dream.errors import ConfigError
from dream.pipeline import gate as gate_module
from dream.pipeline.gate import check_gate
from dream.store.state import StoreState, save_state
from dream.store.layout import Layout


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_precedence_flag_over_store_over_global_over_default(tmp_path, monkeypatch):
    store = tmp_path / "s"
    store.mkdir()
    glob = tmp_path / "global.toml"
    monkeypatch.setenv("DREAM_CONFIG", str(glob))
    assert load_settings(store).min_hours == 24
    write(glob, "min_hours = 12\nmin_sessions = 2\n")
    assert load_settings(store).min_hours == 12
    write(store / ".dream" / "config.toml", "min_hours = 6\n")
    s = load_settings(store)
    assert (s.min_hours, s.min_sessions) == (6, 2)
    assert load_settings(store, {"min_hours": 1}).min_hours == 1


@pytest.mark.parametrize("text,needle", [
    ("min_hours = -1\n", "min_hours"),
    ("bogus = 1\n", "bogus"),
    ("min_hours = [\n", "not valid TOML"),
    ('instructions = "' + "x" * 5000 + '"\n', "4096"),
    ('engine = "gpt"\n', "'engine' invalid enum value 'gpt' (one of: auto, offline, claude)"),
    ('transcripts = "cursor"\n', "(one of: claude-code, codex, claude-mem, none)"),
    ("min_sessions = 2.5\n", "'min_sessions' expected `int`"),
])
def test_bad_config_names_file_and_key(tmp_path, text, needle):
    store = tmp_path / "s"
    write(store / ".dream" / "config.toml", text)
    with pytest.raises(ConfigError) as err:
        load_settings(store)
    assert str(store / ".dream" / "config.toml") in str(err.value)
    assert needle in str(err.value)


def test_config_path_that_is_a_folder_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("DREAM_CONFIG", str(tmp_path))
    with pytest.raises(ConfigError, match="is a folder, not a regular file"):
        load_settings(None)


def make_logs(store, n, mtime):
    for i in range(n):
        p = store / "logs" / "2026" / "11" / "20" / f"s{i:02d}-topic.md"
        write(p, "> hello\n")
        os.utime(p, (mtime, mtime))


def test_gate_reasons_in_order(tmp_path):
    store = tmp_path / "s"
    store.mkdir()
    (store / "MEMORY.md").write_text("")
    layout = Layout.open(store)
    now = time.time()
    settings = load_settings(store)
    # never dreamed, too few sessions
    make_logs(store, 3, now - 10)
    assert check_gate(layout, settings, now=now).reason == "sessions"
    make_logs(store, 6, now - 10)
    assert check_gate(layout, settings, now=now).open
    # dreamed an hour ago: hours
    save_state(layout, StoreState(last_consolidated_at=now - 3600))
    d = check_gate(layout, settings, now=now)
    assert (d.open, d.reason, d.sessions_waiting) == (False, "hours", 6)
    # long ago, but no session since: sessions
    save_state(layout, StoreState(last_consolidated_at=now - 1))
    assert check_gate(layout, settings, now=now + 48 * 3600).reason == "sessions"
    # force opens hours/sessions, not disabled
    assert check_gate(layout, settings, now=now, force=True).open
    off = load_settings(store, {"enabled": False})
    assert check_gate(layout, off, now=now, force=True).reason == "disabled"
    # backoff after failures
    save_state(layout, StoreState(last_consolidated_at=now - 48 * 3600, failures=2, backoff_until=now + 600))
    assert check_gate(layout, settings, now=now).reason == "backoff"


def test_gate_stats_the_logs_only_when_the_sessions_check_is_reached_or_asked(tmp_path, monkeypatch):
    store = tmp_path / "s"
    store.mkdir()
    (store / "MEMORY.md").write_text("")
    layout = Layout.open(store)
    now = time.time()
    make_logs(store, 6, now - 10)
    scans = []
    real = gate_module.scan_sessions
    monkeypatch.setattr(gate_module, "scan_sessions", lambda *a, **k: scans.append(1) or real(*a, **k))
    save_state(layout, StoreState(last_consolidated_at=now - 3600))
    d = check_gate(layout, load_settings(store), now=now)
    assert (d.reason, len(scans)) == ("hours", 0)  # closed before the logs matter
    assert (d.sessions_waiting, d.sessions_waiting, len(scans)) == (6, 6, 1)  # counted once, when asked
    save_state(layout, StoreState(last_consolidated_at=now - 48 * 3600))
    d = check_gate(layout, load_settings(store), now=now)
    assert (d.open, d.to_json()["sessions_waiting"], len(scans)) == (True, 6, 2)


def test_dead_lock_holder_does_not_block(demo_store, cli):
    """A lock info file left by a killed process is ignored, and the kernel lock is free."""
    import json
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (demo_store / ".dream").mkdir()
    (demo_store / ".dream" / "run.lock.json").write_text(json.dumps(
        {"pid": dead.pid, "host": __import__("socket").gethostname(), "run_id": "old", "started_at": 1.0}))
    assert cli("status", "--store", str(demo_store), "--json").json["lock"] is None
    assert cli("run", "--store", str(demo_store), "--json").json["status"] == "proposed"


def test_lock_survives_killed_holder(demo_store, tmp_path):
    """A process killed while holding the lock leaves it free for the next run."""
    import signal
    import subprocess
    import sys

    code = (
        "import sys, time\n"
        "from dream.store.layout import Layout\nfrom dream.store.lock import store_lock\n"
        "with store_lock(Layout.open(sys.argv[1]), 'victim'):\n"
        "    print('held', flush=True); time.sleep(60)\n"
    )
    victim = subprocess.Popen([sys.executable, "-c", code, str(demo_store)], stdout=subprocess.PIPE, text=True)
    assert victim.stdout.readline().strip() == "held"
    from dream.pipeline import run as pipeline

    busy = pipeline.run(demo_store)
    assert (busy.status, busy.reason) == ("skipped", "lock")
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert pipeline.run(demo_store).status == "proposed"


def test_config_command_shows_values_and_their_sources(demo_store, cli, tmp_path, monkeypatch):
    glob = tmp_path / "global.toml"
    glob.write_text("min_sessions = 3\n")
    monkeypatch.setenv("DREAM_CONFIG", str(glob))
    write(demo_store / ".dream" / "config.toml", "min_hours = 6\n")
    res = cli("config", "--store", str(demo_store), "--json")
    assert res.code == 0, res.stderr
    data = res.json
    assert data["settings"]["min_hours"] == 6 and data["settings"]["min_sessions"] == 3
    assert data["sources"]["min_hours"].endswith(".dream/config.toml")
    assert data["sources"]["min_sessions"] == str(glob)
    assert data["sources"]["engine"] == "default"
