"""Bad input in a store: the run tolerates it, never a traceback, never a changed byte.

The one-line errors for bad command lines are in tests/e2e/test_bad_input.py.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest

from dream.store.layout import Layout
from dream.versions.manifests import Versions
from dream.versions.proposals import Proposals
from helpers.stores import DEMO, snapshot_bytes

DEMO_LOGS = sum(1 for p in (DEMO / "logs").rglob("*.md") if p.is_file())


@dataclass
class Tolerated:
    """A run that went through bad input: its JSON, the proposal's report and tree, and its base."""

    json: dict
    report: dict
    tree: dict[str, bytes]
    base: dict[str, bytes]

    def findings_for(self, path: str) -> list[dict]:
        return [f for f in self.report["findings"] if f["path"] == path]


def _run_tolerates(store, cli) -> Tolerated:
    """The run must succeed with a proposal and leave every byte of the store as it was."""
    before = snapshot_bytes(store)
    res = cli("run", "--store", str(store), "--force", "--json")
    assert res.code == 0, res.stderr
    assert "Traceback" not in res.stderr
    assert res.json["status"] == "proposed", res.json
    assert snapshot_bytes(store) == before
    layout = Layout.open(store)
    proposals = Proposals(layout)
    proposal = proposals.get(res.json["proposal_id"])
    base = Versions(layout).tree(proposal.base_version)
    return Tolerated(res.json, proposals.report(proposal), proposals.tree(proposal), base)


def test_binary_file_in_logs(demo_store, cli):
    p = demo_store / "logs" / "2026" / "11" / "27" / "bin-blob.md"
    p.parent.mkdir(parents=True)
    p.write_bytes(bytes(range(256)) * 100)
    run = _run_tolerates(demo_store, cli)
    assert run.report["warnings"] == ["logs/2026/11/27/bin-blob.md: binary file (NUL bytes), skipped"]
    assert run.report["sessions_read"] == DEMO_LOGS  # the blob is not one of them


def test_invalid_utf8_in_log_and_memory(demo_store, cli):
    p = demo_store / "logs" / "2026" / "11" / "27" / "bad-utf8.md"
    p.parent.mkdir(parents=True)
    p.write_bytes(b"> remember that caf\xe9 is latin-1\n")
    latin1 = b"---\nname: x\ntype: user\n---\ncaf\xe9\n"
    (demo_store / "latin1_note.md").write_bytes(latin1)
    run = _run_tolerates(demo_store, cli)
    # The log is read with replacement characters; the memory file is left byte for byte and named, with why
    # (issue 38: one file dream cannot read does not stop the night).
    assert sorted(run.report["warnings"]) == [
        "latin1_note.md: left as it is, not dreamed: not valid UTF-8 (byte 30)",
        "logs/2026/11/27/bad-utf8.md: invalid UTF-8, decoded with replacement characters",
    ]
    assert run.report["sessions_read"] == DEMO_LOGS + 1
    assert run.base["latin1_note.md"] == run.tree["latin1_note.md"] == latin1


@pytest.mark.slow  # writes and reads 50 MB
def test_fifty_megabyte_single_line_log(demo_store, cli):
    p = demo_store / "logs" / "2026" / "11" / "27" / "huge-line.md"
    p.parent.mkdir(parents=True)
    with p.open("wb") as fh:
        fh.write(b"> ")
        fh.write(b"a" * (50 * 1024 * 1024))
        fh.write(b"\n")
    run = _run_tolerates(demo_store, cli)
    assert run.report["sessions_read"] == DEMO_LOGS + 1
    assert run.report["warnings"] == []
    assert all(len(data) < 1024 * 1024 for data in run.tree.values()), "the huge line is not copied into memory"


def test_malformed_frontmatter(demo_store, cli):
    broken = "---\nname: [unclosed\ntype: : :\n---\nbody\n"
    unterminated = "---\nname: never closed\nbody without end\n"
    (demo_store / "broken_fm.md").write_text(broken)
    (demo_store / "unterminated_fm.md").write_text(unterminated)
    run = _run_tolerates(demo_store, cli)
    assert run.tree["broken_fm.md"] == broken.encode()
    assert run.tree["unterminated_fm.md"] == unterminated.encode()
    for path, needle in (("broken_fm.md", "malformed frontmatter"), ("unterminated_fm.md", "no closing '---'")):
        found = run.findings_for(path)
        assert [(f["severity"], f["rule"]) for f in found] == [("warning", "frontmatter")], found
        assert needle in found[0]["message"]
        # Nothing in the report claims the file itself was changed.
        assert [c for c in run.report["changes"] if c["path"] == path] == []


def test_symlink_pointing_outside(demo_store, tmp_path, cli):
    secret = tmp_path / "outside.md"
    secret.write_text("---\nname: outside\ntype: user\n---\nnot yours\n")
    os.symlink(secret, demo_store / "linked.md")
    outside_dir = tmp_path / "outdir"
    outside_dir.mkdir()
    (outside_dir / "x.md").write_text("outside folder\n")
    os.symlink(outside_dir, demo_store / "linkdir")
    before_secret = secret.read_bytes()
    run = _run_tolerates(demo_store, cli)
    # Neither read into the base version nor written into the proposal.
    for tree in (run.base, run.tree):
        assert not [p for p in tree if p == "linked.md" or p.startswith("linkdir/")]
    assert b"not yours" not in b"".join(run.tree.values())
    assert secret.read_bytes() == before_secret
    acc = cli("accept", "--store", str(demo_store), "--json")
    assert acc.code == 0, acc.stderr
    assert secret.read_bytes() == before_secret
    assert (outside_dir / "x.md").read_text() == "outside folder\n"
    assert os.path.islink(demo_store / "linked.md")
    assert os.path.islink(demo_store / "linkdir") and sorted(os.listdir(outside_dir)) == ["x.md"]


def test_unreadable_memory_file_is_a_bad_input_naming_it(demo_store, monkeypatch):
    """Tests run as root, so the permission error is simulated on the one file."""
    from pathlib import Path

    from dream.errors import BadInput
    from dream.pipeline import run as pipeline
    from dream.store import regular

    real_open, real_read_bytes = os.open, Path.read_bytes

    def open_(path, flags, *args, **kwargs):
        if os.fsdecode(path).endswith("user_role.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(regular.os, "open", open_)
    before = {p: real_read_bytes(p) for p in demo_store.rglob("*.md")}
    with pytest.raises(BadInput, match=r"user_role\.md: cannot read memory file: Permission denied"):
        pipeline.run(demo_store, force=True)
    assert {p: real_read_bytes(p) for p in demo_store.rglob("*.md")} == before
