"""What dream writes into a store: never through a symlink, never over an edit it did not plan, modes kept."""

from __future__ import annotations

import json
import os
import stat

import pytest

from helpers.cli import in_process

from dream import history
from dream.errors import Refused
from dream.pipeline import run as pipeline
from dream.review import decide as accept_mod
from dream.store.layout import Layout
from dream.store.tree import (
    DurableBatch,
    atomic_write,
    read_tree,
    sha256,
    symlinked_memory,
    unsafe_target,
)
from dream.versions import journal as journal_mod
from dream.versions.journal import (
    Journal,
    StoreChangedDuringWrite,
    recover,
    write_journal,
)
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ unsafe targets


def test_unsafe_target_names_what_is_wrong(tmp_path):
    root = tmp_path / "store"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("a")
    (root / "dir.md").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "linked").symlink_to(tmp_path / "elsewhere")
    (root / "link.md").symlink_to(root / "a.md")
    assert unsafe_target(root, "a.md") is None
    assert unsafe_target(root, "new.md") is None
    assert unsafe_target(root, "sub/new.md") is None
    assert unsafe_target(root, "dir.md") == "is a folder"
    assert unsafe_target(root, "link.md") == "is a symlink"
    assert unsafe_target(root, "linked/x.md") == "folder 'linked' is a symlink"
    assert unsafe_target(root, "a.md/x.md") == "'a.md' is not a folder"
    assert unsafe_target(root, "../x.md") == "path leaves the store"


# ------------------------------------------------------------------ symlinked memory files


def test_symlinked_index_is_reported_and_accept_refuses_to_replace_it(demo_store, cli, tmp_path):
    real = tmp_path / "real.md"
    (demo_store / "MEMORY.md").rename(real)
    (demo_store / "MEMORY.md").symlink_to(real)
    real_before = real.read_bytes()
    assert symlinked_memory(demo_store) == ["MEMORY.md"]

    run = cli("run", "--store", str(demo_store), "--force", "--json")
    assert run.code == 0, run.stderr
    report = Proposals(Layout.open(demo_store)).get(run.json["proposal_id"])
    assert report is not None
    before = read_tree(demo_store)
    refused = cli("accept", "--store", str(demo_store))
    assert refused.code == 1, refused.stdout
    assert "MEMORY.md: is a symlink" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert (demo_store / "MEMORY.md").is_symlink() and real.read_bytes() == real_before
    assert read_tree(demo_store) == before
    assert not Layout.open(demo_store).journal.exists()


def test_run_warns_about_symlinked_memory(demo_store, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("---\nname: x\ndescription: x\ntype: user\n---\nx\n")
    (demo_store / "linked_note.md").symlink_to(outside)
    ctx = pipeline.begin(demo_store, engine="offline", force=True)
    ctx.layout.ensure()
    pipeline.snapshot(ctx)
    assert "linked_note.md: symlink, not followed" in ctx.warnings


def test_replay_does_not_write_through_a_symlinked_folder(tmp_path):
    """The journal's pre-image still matches, but the folder became a link: nothing is written out there."""
    root = tmp_path / "store"
    (root / "team").mkdir(parents=True)
    (root / "MEMORY.md").write_text("- [A](team/a.md) — a\n")
    (root / "team" / "a.md").write_bytes(b"old\n")
    layout = Layout.open(root)
    layout.ensure()
    versions = Versions(layout)
    versions.record(read_tree(root), "snapshot")
    files = versions.blobs.put_tree({**read_tree(root), "team/a.md": b"new\n"})
    write_journal(layout, Journal("accept", 2, files, ["team/a.md"], [], "accept",
                                  before={"team/a.md": sha256(b"old\n")}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "a.md").write_bytes(b"old\n")
    (root / "team" / "a.md").unlink()
    (root / "team").rmdir()
    (root / "team").symlink_to(outside)

    with pytest.raises(StoreChangedDuringWrite, match="folder 'team' is a symlink"):
        recover(layout)
    assert (outside / "a.md").read_bytes() == b"old\n"
    assert not layout.journal.exists()
    assert versions.tree(versions.current()) == read_tree(root)  # the store as found (the link is not read)


# ------------------------------------------------------------------ file modes


def test_atomic_write_keeps_the_mode_and_new_files_follow_the_umask(tmp_path):
    kept = tmp_path / "kept.md"
    kept.write_text("a")
    kept.chmod(0o640)
    atomic_write(kept, b"b")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640 and kept.read_bytes() == b"b"
    fresh = tmp_path / "fresh.md"
    atomic_write(fresh, b"c")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~_umask()


def test_accept_keeps_file_modes(demo_store, cli):
    for md in demo_store.glob("*.md"):
        md.chmod(0o664)
    pid = cli("run", "--store", str(demo_store), "--json").json["proposal_id"]
    proposal = Proposals(Layout.open(demo_store)).get(pid)
    kept = Proposals(Layout.open(demo_store)).tree(proposal)
    rewritten = [p for p in proposal.changed if (demo_store / p).exists() and p in kept]
    created = [p for p in proposal.changed if not (demo_store / p).exists()]
    assert rewritten and created
    (demo_store / rewritten[0]).chmod(0o640)
    assert cli("accept", pid, "--store", str(demo_store)).code == 0
    assert stat.S_IMODE((demo_store / rewritten[0]).stat().st_mode) == 0o640
    for path in rewritten[1:]:
        assert stat.S_IMODE((demo_store / path).stat().st_mode) == 0o664, path
    for path in created:
        assert stat.S_IMODE((demo_store / path).stat().st_mode) == 0o666 & ~_umask(), path


# ------------------------------------------------------------------ an edit during the accept itself


def _accept_with_agent_edit(demo_store, monkeypatch, edit):
    """Accept the demo proposal while `edit(path)` changes one of its files after the plan; (pid, victim, before)."""
    pid = cli_run(demo_store)
    layout = Layout.open(demo_store)
    proposal = Proposals(layout).get(pid)
    victim = next(p for p in proposal.changed if (demo_store / p).exists())
    before = read_tree(demo_store)

    def agent_writes_meanwhile(name: str) -> None:
        if name == "accept-after-journal":  # the plan is made and journaled, nothing written yet
            edit(demo_store / victim)

    monkeypatch.setattr(accept_mod, "crashpoint", agent_writes_meanwhile)
    return pid, victim, before


def cli_run(store) -> str:
    return in_process("run", "--store", str(store), "--json").json["proposal_id"]


def test_append_between_plan_and_write_is_merged_into_the_new_version(demo_store, monkeypatch):
    def append(path):
        with open(path, "ab") as fh:
            fh.write(b"AGENT-EDIT during accept\n")

    pid, victim, before = _accept_with_agent_edit(demo_store, monkeypatch, append)
    layout = Layout.open(demo_store)
    proposed = Proposals(layout).tree(Proposals(layout).get(pid))
    decision = accept_mod.accept(demo_store, pid, comment="ok")
    now = read_tree(demo_store)
    assert now[victim].endswith(b"AGENT-EDIT during accept\n")
    assert now[victim].startswith(proposed[victim].rstrip(b"\n"))
    assert Versions(layout).tree(decision.version) == now  # the version holds the merged bytes
    assert not layout.journal.exists()


def test_edit_colliding_with_the_write_is_refused_and_kept(demo_store, cli, monkeypatch):
    def rewrite(path):
        path.write_bytes(b"AGENT rewrote the whole file\n")

    pid, victim, before = _accept_with_agent_edit(demo_store, monkeypatch, rewrite)
    layout = Layout.open(demo_store)
    with pytest.raises(Refused, match=f"{victim}: was edited during the write.*dream accept {pid}"):
        accept_mod.accept(demo_store, pid, comment="ok")

    edited = {**before, victim: b"AGENT rewrote the whole file\n"}
    assert read_tree(demo_store) == edited  # nothing of the proposal written, the edit is there
    versions = Versions(layout)
    assert versions.tree(versions.current()) == edited  # and kept as a version
    assert Proposals(layout).get(pid).status == "pending"
    assert not layout.journal.exists()
    assert [e["action"] for e in history.events(layout)] == ["accept-abandoned"]
    json.dumps(cli("status", "--store", str(demo_store), "--json").json)  # the store is usable


def test_durable_batch_keeps_modes_and_leaves_no_temporary_files(tmp_path):
    kept = tmp_path / "kept.md"
    kept.write_bytes(b"old")
    kept.chmod(0o640)
    fresh = tmp_path / "fresh.md"
    with DurableBatch() as batch:
        batch.write(kept, b"new")
        batch.write(fresh, b"\x00binary\xff" * 1000)
        batch.commit()
    assert kept.read_bytes() == b"new" and stat.S_IMODE(kept.stat().st_mode) == 0o640
    assert fresh.read_bytes() == b"\x00binary\xff" * 1000
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~_umask()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.md", "kept.md"]


def test_durable_batch_that_fails_to_write_changes_nothing(tmp_path):
    (tmp_path / "a-file").write_bytes(b"in the way")  # cannot hold a folder
    good = tmp_path / "good.md"
    good.write_bytes(b"old")
    with pytest.raises(OSError), DurableBatch() as batch:
        batch.write(good, b"new")
        batch.write(tmp_path / "a-file" / "x.md", b"y")
        batch.commit()
    assert good.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "good.md"]


# ------------------------------------------------------------------ a refused rollback takes back all it wrote


def test_a_refused_rollback_puts_back_every_file_it_wrote_with_the_agents_lines(demo_store, monkeypatch):
    """Observed on main: a refused rollback left MEMORY.md at the old version and the topic files at the new
    one, because the files already swapped kept the rollback's bytes when the agent had appended to them."""
    accept_mod.accept(demo_store, cli_run(demo_store))
    layout = Layout.open(demo_store)
    found = read_tree(demo_store)
    target = Versions(layout).tree(1)
    changed = [p for p in sorted(set(found) | set(target)) if found.get(p) != target.get(p)]
    assert len(changed) >= 2
    order: list[str] = []

    def agent_meanwhile(name: str) -> None:
        if name == "rollback-after-first-write":
            first = next(p for p in changed if (demo_store / p).exists() and found.get(p) != read(p))
            order.append(first)
            rolled = (demo_store / first).read_bytes()  # after dream swapped it in, the agent edits a line
            line = next(x for x in rolled.splitlines() if x.strip() and x not in found[first].splitlines())
            (demo_store / first).write_bytes(rolled.replace(line, line + b" (agent's note)", 1))
            order.append(line + b" (agent's note)\n")
            last = next(p for p in reversed(changed) if p != first and (demo_store / p).exists())
            order.append(last)
            (demo_store / last).write_bytes(b"agent rewrote this whole file\n")  # collides with the rollback

    def read(rel: str) -> bytes | None:
        return (demo_store / rel).read_bytes() if (demo_store / rel).exists() else None

    monkeypatch.setattr(journal_mod, "crashpoint", agent_meanwhile)
    with pytest.raises(Refused, match="the rollback was not applied and nothing was lost"):
        accept_mod.rollback(demo_store, 1)

    first, agent_line, last = order
    now = read_tree(demo_store)
    assert now[first] == found[first] + agent_line  # the file as found, then the agent's own line
    assert now[last] == b"agent rewrote this whole file\n"
    assert {p: b for p, b in now.items() if p not in order} == {p: b for p, b in found.items() if p not in order}
    assert not layout.journal.exists()
