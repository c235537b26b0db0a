"""Hostile inputs: each one ends the command with exit 2 and one line naming the file, within a time bound,
under a memory cap, from the installed command. None hangs, none eats memory, none prints a traceback.

The bound (`TIMEOUT`) is a hang detector, not a timing assert: before the fix a FIFO hung forever, a
character device read until the kernel killed it and an alias bomb ran 200 s into a MemoryError.
"""

from __future__ import annotations

import os
import resource
import shutil
import socket
import stat
import subprocess
from pathlib import Path

import pytest
from helpers.cli import Result, assert_one_line_error, console_script
from helpers.stores import DEMO

pytestmark = pytest.mark.slow

TIMEOUT = 60  # seconds; each case takes about one
MEMORY_CAP = 1 << 30  # address space, bytes


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def dream(store: Path, *args: str) -> Result:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                                       os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([*console_script(), *args, "--store", str(store)], capture_output=True, text=True,
                          timeout=TIMEOUT, preexec_fn=_capped, env=env, stdin=subprocess.DEVNULL)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def assert_exit_2_naming(res: Result, needle: str) -> None:
    assert_one_line_error(res, 2, needle)


@pytest.fixture
def store(tmp_path) -> Path:
    dest = tmp_path / "store"
    shutil.copytree(DEMO, dest, ignore=shutil.ignore_patterns(".dream"))
    return dest


@pytest.fixture
def dreamed(store) -> Path:
    """The store after one run: .dream/ holds state, versions, a proposal."""
    res = dream(store, "run", "--force", "--json")
    assert res.code == 0, res.stderr
    return store


def _fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)


def _device(path: Path) -> None:
    path.unlink(missing_ok=True)
    zero = os.stat("/dev/zero").st_rdev  # a device that never ends
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, zero)
    except PermissionError:
        pytest.skip("making a device node needs root")


def _socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    return sock


def test_fifo_in_place_of_the_index(store):
    _fifo(store / "MEMORY.md")
    assert_exit_2_naming(dream(store, "run", "--force"), "MEMORY.md: memory file is a FIFO")


def test_character_device_in_place_of_the_index(store):
    _device(store / "MEMORY.md")
    assert_exit_2_naming(dream(store, "run", "--force"), "MEMORY.md: memory file is a character device")


@pytest.mark.parametrize("rel, kind", [("topic.md", "a FIFO"), ("sub/x.md", "a FIFO"),
                                       ("zero.md", "a character device")])
def test_a_special_file_in_place_of_a_topic_is_left_and_named(store, rel, kind):
    (_fifo if kind == "a FIFO" else _device)(store / rel)
    res = dream(store, "run", "--force")
    assert res.code == 0, res.stderr
    assert f"{rel}: left as it is, not dreamed: {kind}, not a regular file" in res.stdout


def test_socket_in_place_of_a_memory_file_is_left_and_named(store):
    with _socket(store / "sock.md"):
        res = dream(store, "run", "--force")
    assert res.code == 0, res.stderr
    assert "sock.md: left as it is, not dreamed: a socket, not a regular file" in res.stdout


@pytest.mark.parametrize("rel,what", [
    (".dream/state.json", "state file is a FIFO"),
    (".dream/versions/000001.json", "version manifest is a FIFO"),
])
def test_fifo_in_place_of_a_record(dreamed, rel, what):
    _fifo(dreamed / rel)
    assert_exit_2_naming(dream(dreamed, "run", "--force"), f"{rel}: {what}")


def test_fifo_in_place_of_the_journal_is_refused_not_hung(dreamed):
    _fifo(dreamed / ".dream" / "accept.journal.json")
    assert_exit_2_naming(dream(dreamed, "accept"), "accept.journal.json")
    assert "journal is a FIFO" in dream(dreamed, "accept").stderr


def test_yaml_alias_bomb(store):
    anchors = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    for i in range(8):
        prev, name = chr(97 + i), chr(98 + i)
        anchors.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    (store / "bomb.md").write_text("---\nname: bomb\ntype: user\n" + "\n".join(anchors) + "\n---\nbody\n")
    res = dream(store, "run", "--force")  # never expanded: left as it is, and named
    assert res.code == 0, res.stderr
    assert "bomb.md: left as it is, not dreamed: frontmatter uses a YAML alias" in res.stdout


DEEP_JSON = b"[" * 200_000 + b"]" * 200_000


@pytest.mark.parametrize("rel", [".dream/state.json", ".dream/versions/000001.json"])
def test_deep_json_record(dreamed, rel):
    (dreamed / rel).write_bytes(DEEP_JSON)
    assert_exit_2_naming(dream(dreamed, "run", "--force"), f"{rel}")


def test_deep_json_journal_is_named_and_kept(dreamed):
    journal = dreamed / ".dream" / "accept.journal.json"
    journal.write_bytes(DEEP_JSON)
    assert_exit_2_naming(dream(dreamed, "accept"), "accept.journal.json: an interrupted accept or rollback is not")
    assert journal.read_bytes() == DEEP_JSON  # kept for a person to look at, as the message says


def test_deep_json_proposal_is_one_warning_and_the_store_still_works(dreamed):
    proposal = next((dreamed / ".dream" / "proposals").glob("*/proposal.json"))
    proposal.write_bytes(DEEP_JSON)
    res = dream(dreamed, "status")
    assert res.code == 0 and str(proposal.relative_to(dreamed)) in res.stderr, res.stderr


def test_deep_toml_config(dreamed):
    (dreamed / ".dream" / "config.toml").write_bytes(b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n")
    assert_exit_2_naming(dream(dreamed, "status"), "config.toml: not valid TOML")


@pytest.mark.parametrize("data,why", [
    (b"- [a](a.md) \xff\xfe bad\n", "not valid UTF-8"),
    (b"- [a](a.md) x\x00y\n", "holds NUL bytes"),
    ("- [a](a.md) utf-16\n".encode("utf-16"), "UTF-16"),
])
def test_index_that_is_not_utf8_text(store, data, why):
    (store / "MEMORY.md").write_bytes(data)
    assert_exit_2_naming(dream(store, "run", "--force"), f"MEMORY.md: {why}")


def test_topic_of_random_bytes_is_left_and_named(store):
    (store / "random.md").write_bytes(bytes(range(256)) * 16)
    res = dream(store, "run", "--force")
    assert res.code == 0, res.stderr
    assert "random.md: left as it is, not dreamed: holds NUL bytes (binary, not text)" in res.stdout
    assert (store / "random.md").read_bytes() == bytes(range(256)) * 16


def test_impossible_date_in_frontmatter_is_left_and_named(store):
    (store / "dated.md").write_text("---\nname: d\ntype: user\ncreated: 2026-13-01\n---\nbody\n")
    res = dream(store, "run", "--force")
    assert res.code == 0, res.stderr
    assert "dated.md: left as it is, not dreamed: frontmatter has a value YAML cannot read" in res.stdout


def test_folders_1100_deep(store):
    fd = os.open(store, os.O_RDONLY)
    for _ in range(1100):  # by descriptor: paths this long defeat os.makedirs
        os.mkdir("d", dir_fd=fd)
        fd, old = os.open("d", os.O_RDONLY, dir_fd=fd), fd
        os.close(old)
    os.close(os.open("x.md", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
    os.close(fd)
    try:
        assert_exit_2_naming(dream(store, "run", "--force"), "folders nested deeper than")
    finally:  # pytest removes old temporary folders recursively: 1,100 levels would break every later run
        subprocess.run(["rm", "-rf", str(store / "d")], check=True)


def test_file_name_that_is_not_utf8(store):
    with open(os.fsencode(store) + b"/bad\xffname.md", "wb") as fh:
        fh.write(b"---\nname: x\ntype: user\n---\nhi\n")
    assert_exit_2_naming(dream(store, "run", "--force"), "bad\\xffname.md: file name is not valid UTF-8")


def test_index_that_is_a_folder(store):
    (store / "MEMORY.md").unlink()
    (store / "MEMORY.md").mkdir()
    assert_exit_2_naming(dream(store, "run", "--force"), "MEMORY.md: the index is a folder")


def test_lock_holder_file_that_is_a_folder_is_moved_aside_not_a_block(dreamed):
    (dreamed / ".dream" / "run.lock.json").mkdir()
    res = dream(dreamed, "run", "--force")
    assert res.code == 0 and "run.lock.json: was a folder" in res.stderr, res.stderr
    assert dream(dreamed, "accept").code == 0
    assert list((dreamed / ".dream").glob("run.lock.json.not-a-file-*"))


def test_lock_file_that_is_a_folder(dreamed):
    (dreamed / ".dream" / "run.lock").unlink(missing_ok=True)
    (dreamed / ".dream" / "run.lock").mkdir()
    assert_exit_2_naming(dream(dreamed, "run", "--force"), "run.lock: the store's lock file is a folder")


def test_blob_that_is_a_folder(tmp_path):
    from dream.store.layout import Layout
    from dream.versions.manifests import Blobs, Versions

    small = tmp_path / "small"  # a few files: the version's objects are loose files, not a pack
    small.mkdir()
    (small / "MEMORY.md").write_text("# Memory\n- [Pager](pager.md) - who is on call\n- [Gone](gone.md) - deleted\n")
    (small / "pager.md").write_text("---\nname: pager\ntype: project\ndescription: on call\n---\nAda is on call.\n")
    assert dream(small, "run", "--force").code == 0 and dream(small, "accept").code == 0
    layout = Layout.open(small)
    blob = Blobs(layout).path(Versions(layout).get(1).files["MEMORY.md"])
    blob.unlink()
    blob.mkdir()
    assert_exit_2_naming(dream(small, "rollback", "1"), f"{blob.name}: stored object is a folder")


def test_pack_that_is_a_folder(dreamed):
    from dream.store.layout import Layout
    from dream.versions.manifests import Blobs, Versions

    layout = Layout.open(dreamed)
    assert dream(dreamed, "accept").code == 0
    blobs = Blobs(layout)
    pack = blobs.packed()[Versions(layout).get(1).files["MEMORY.md"]].path  # the demo's snapshot is one pack
    pack.unlink()
    pack.mkdir()
    assert_exit_2_naming(dream(dreamed, "rollback", "1"), f"damaged pack {pack}")


def test_255_byte_file_name_does_not_fail_every_run(store):
    (store / ("n" * 252 + ".md")).write_text("---\nname: long\ntype: user\ndescription: long\n---\nbody\n")
    res = dream(store, "run", "--force", "--json")
    assert res.code == 0, res.stderr
    assert dream(store, "accept").code == 0
    assert not [p for p in os.listdir(store) if p.endswith(".tmp")]


@pytest.mark.parametrize("rel", [".dream", ".dream/versions", ".dream/proposals", ".dream/objects"])
def test_symlinked_dream_folder_is_refused(dreamed, tmp_path, rel):
    outside = tmp_path / "outside"
    shutil.move(dreamed / rel, outside)
    os.symlink(outside, dreamed / rel)
    before = sorted(p.relative_to(outside) for p in outside.rglob("*"))
    for command in (["run", "--force"], ["accept"], ["status"], ["rollback", "1"]):
        assert_exit_2_naming(dream(dreamed, *command), f"{rel}: is a symlink")
    assert sorted(p.relative_to(outside) for p in outside.rglob("*")) == before  # nothing written through it


@pytest.mark.parametrize("damage", ["fifo", "deep"])
def test_damaged_import_state_is_read_as_none(tmp_path, damage):
    from dream.transcripts.importer import load_state, state_path

    store = tmp_path / "store"
    state_path(store).parent.mkdir(parents=True)
    if damage == "fifo":
        os.mkfifo(state_path(store))
    else:
        state_path(store).write_bytes(DEEP_JSON)
    assert load_state(store) == {}  # a lost state costs a full re-read, never a hang


@pytest.mark.parametrize("damage", ["fifo", "gzip-bomb", "deep"])
def test_damaged_proposal_review_is_named_not_hung(dreamed, damage):
    import gzip

    review = next((dreamed / ".dream" / "proposals").glob("*/review.json.gz"))
    review.unlink()
    if damage == "fifo":
        os.mkfifo(review)
    elif damage == "gzip-bomb":  # 200 KB that inflates to 200 MB, over the 64 MB cap
        review.write_bytes(gzip.compress(b" " * (200 << 20), compresslevel=9))
    else:
        review.write_bytes(gzip.compress(DEEP_JSON))
    res = dream(dreamed, "diff")
    assert res.code == 2 and "review.json.gz" in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
