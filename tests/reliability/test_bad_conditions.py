"""Every bad condition a user meets on a bad day is one line and exit 2, through the command line.

Each test is one bullet of issue 22's "Observed on main": a store you cannot
write, `.dream/` owned by another user, an unreadable $HOME with --store,
escape sequences in file names, a FIFO in place of a review-wait record, and
a 2,000-character word in a remember request. Tests that need a second user
run dream as `nobody` when they run as root, and skip otherwise.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from helpers.cli import assert_one_line_error, console_script

from dream.store.layout import Layout

NOBODY = 65534
AS_ROOT = os.geteuid() == 0
# Root writes through any file mode; without these capabilities it obeys them like any user.
NO_OVERRIDE = ["setpriv", "--inh-caps=-dac_override,-dac_read_search,-fowner",
               "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def dream_bound_by_modes(*args: str) -> subprocess.CompletedProcess:
    """The installed dream command, obeying file modes even when this test runs as root."""
    prefix = NO_OVERRIDE if AS_ROOT else []
    return subprocess.run([*prefix, *console_script(), *args], capture_output=True, text=True, timeout=120)


def _chown_tree(path: Path, uid: int) -> None:
    for p in [path, *path.rglob("*")]:
        os.lchown(p, uid, uid)


def _set_modes(store: Path, folder_mode: int) -> None:
    for p in [store, *store.rglob("*")]:
        if p.is_dir():
            os.chmod(p, folder_mode)


@pytest.mark.skipif(AS_ROOT and not shutil.which("setpriv"), reason="root needs setpriv to obey file modes")
def test_folders_of_mode_555_are_one_line_and_exit_2_not_an_internal_error(demo_store):
    """Observed on main: folders set to mode 555 (or a store of another user) gave
    `internal error: PermissionError`, exit 1."""
    _set_modes(demo_store, 0o555)
    try:
        res = dream_bound_by_modes("run", "--store", str(demo_store), "--force")
    finally:
        _set_modes(demo_store, 0o755)
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "internal error" not in res.stderr, res.stderr
    assert "Permission denied" in res.stderr and "chmod -R u+w" in res.stderr, res.stderr


@pytest.mark.skipif(not AS_ROOT, reason="needs root to own files in another user's store")
def test_root_does_not_leave_root_owned_files_in_another_users_store(demo_store, cli):
    """Observed on main: root running dream on another user's store left `.dream/` owned by root, and the
    owner's own accept then failed. Root is now told to run dream as the owner, and writes nothing."""
    _chown_tree(demo_store, NOBODY)
    res = cli("run", "--store", str(demo_store), "--force")
    assert_one_line_error(res, 2, "run dream as nobody", "sudo -u nobody")
    assert [p for p in demo_store.rglob("*") if p.stat().st_uid != NOBODY] == []


@pytest.mark.skipif(not AS_ROOT, reason="needs root to give the store's files to two owners")
def test_dream_folder_owned_by_another_user_names_the_fix(demo_store, cli, monkeypatch):
    """`.dream/` files root made in nobody's store: nobody's accept says which chown to run, one line, exit 2.

    The files' owners are real; the command runs in this process with nobody's user id (this test cannot
    start Python as nobody: the interpreter lives under /root)."""
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    _chown_tree(demo_store, NOBODY)
    dream_folder = Layout.open(demo_store).dream
    _chown_tree(dream_folder, 0)  # as `sudo dream run` on the owner's store left it
    monkeypatch.setattr(os, "geteuid", lambda: NOBODY)
    res = cli("accept", pid, "--store", str(demo_store))
    assert_one_line_error(res, 2, f"sudo chown -R nobody {dream_folder}")


def test_an_unreadable_home_does_not_stop_a_command_that_names_its_store(demo_store, cli, tmp_path):
    """Observed on main: an unreadable $HOME made every command exit 2, even with --store."""
    home = tmp_path / "home"
    home.write_text("not a folder: ~/.config cannot be reached, as in a home of mode 000\n")
    res = cli("status", "--store", str(demo_store), "--json", env={"HOME": str(home), "XDG_CONFIG_HOME": "",
                                                                         "DREAM_CONFIG": ""})
    assert res.code == 0, res.stderr
    assert "cannot be reached" in res.stderr


def test_diff_escapes_control_characters_in_file_names(demo_store, cli):
    """Observed on main: `dream diff` printed terminal escape sequences from file names raw."""
    assert cli("run", "--store", str(demo_store), "--json").code == 0  # version 1: the store as found
    evil = "project_\x1b[2J\x1b]0;owned\x07.md"
    (demo_store / evil).write_text("---\nname: x\ndescription: x\ntype: project\n---\nbody\n")
    assert cli("run", "--store", str(demo_store), "--force", "--json").code == 0  # the edit becomes version 2
    res = cli("diff", "--store", str(demo_store), "--from", "1", "--to", "2")
    assert res.code == 0, res.stderr
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert "project_\\x1b[2J\\x1b]0;owned\\x07.md" in res.stdout


def test_a_fifo_in_place_of_a_review_wait_record_does_not_hang_accept(demo_store, cli):
    """Observed on main: a FIFO there made `dream accept` hang after the accept was written."""
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    waits = Layout.open(demo_store).dream / "review-waits"
    waits.mkdir(parents=True, exist_ok=True)
    os.mkfifo(waits / f"{pid}.json")
    res = subprocess.run([*console_script(), "accept", pid, "--store", str(demo_store), "--json"],
                         capture_output=True, text=True, timeout=60)  # a hang fails here, not forever
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["status"] == "accepted"
    assert stat.S_ISFIFO(os.lstat(waits / f"{pid}.json").st_mode)  # left as found: not dream's to remove


def test_a_long_word_in_remember_does_not_stop_the_night(demo_store, cli):
    """Observed on main: `> remember <a 2,000-character word>` ended the run with "File name too long",
    exit 1 and no JSON, every night until someone edited the log."""
    log = demo_store / "logs" / "2026" / "11" / "30" / "0b1c2d3e-0000-4000-8000-000000000001-long.md"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"> remember {'w' * 2000}\n< Noted.\n")
    res = cli("run", "--store", str(demo_store), "--force", "--json")
    assert res.code == 0, res.stderr
    assert res.json["status"] in ("proposed", "noop"), res.json
    assert all(len(p.name.encode()) <= 255 for p in demo_store.rglob("*"))


def _read_only_mount_works() -> bool:
    """A private mount namespace of our own, where a folder can be bound read-only (no real mount is touched)."""
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _read_only_mount_works(), reason="needs `unshare -rm` to mount a folder read-only")
def test_a_store_on_a_read_only_file_system_is_not_told_to_chmod(demo_store):
    """Observed on main (issue 39): `Read-only file system; … run chmod -R u+w`, which cannot help."""
    store = shlex.quote(str(demo_store))
    script = " ".join(["mount --bind", store, store, "&& mount -o remount,ro,bind", store, store, "&& exec",
                       *map(shlex.quote, console_script()), "run --store", store, "--force"])
    res = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr, res.stderr
    assert "Read-only file system" in res.stderr and "mounted read-only" in res.stderr, res.stderr
    assert "chmod" not in res.stderr and "chown" not in res.stderr, res.stderr
    assert not (demo_store / ".dream").exists()
