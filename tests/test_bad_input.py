"""Bad input: a clear one-line error or tolerance, never a traceback, never a changed byte."""

from __future__ import annotations

import os

import pytest

from tests.test_pipeline_demo import snapshot_bytes


def assert_one_line_error(res, code, *needles):
    assert res.code == code, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.stderr
    for n in needles:
        assert n in lines[0]


def test_missing_store(tmp_path, cli):
    res = cli("run", "--store", str(tmp_path / "nope"), "--json")
    assert_one_line_error(res, 2, "nope", "does not exist")
    assert res.stdout == ""


def test_store_is_a_file(tmp_path, cli):
    f = tmp_path / "file"
    f.write_text("x")
    assert_one_line_error(cli("status", "--store", str(f)), 2, "not a folder")


def test_folder_that_is_not_a_store_is_refused_untouched(tmp_path, cli):
    (tmp_path / "notes.txt").write_text("not memory")
    res = cli("run", "--store", str(tmp_path), "--force")
    assert_one_line_error(res, 2, "not a memory store")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_unknown_proposal_and_version(demo_store, cli):
    assert_one_line_error(cli("accept", "nope", "--store", str(demo_store)), 2, "no proposal")
    assert_one_line_error(cli("rollback", "7", "--store", str(demo_store)), 2, "no version 7")
    assert_one_line_error(cli("rollback", "seven", "--store", str(demo_store)), 2, "version")


def test_bad_usage_is_one_line(cli):
    assert_one_line_error(cli("run", "--no-such-flag"), 2, "no-such-flag")


def test_bad_store_config(demo_store, cli):
    (demo_store / ".dream").mkdir()
    (demo_store / ".dream" / "config.toml").write_text("min_sessions = 'many'\n")
    assert_one_line_error(cli("run", "--store", str(demo_store)), 2, "config.toml", "min_sessions")


def _run_tolerates(store, cli):
    before = snapshot_bytes(store)
    res = cli("run", "--store", str(store), "--force", "--json")
    assert res.code in (0, 1), res.stderr
    assert "Traceback" not in res.stderr
    assert res.json["status"] in ("proposed", "noop", "failed")
    assert snapshot_bytes(store) == before
    return res.json


def test_binary_file_in_logs(demo_store, cli):
    p = demo_store / "logs" / "2026" / "11" / "27" / "bin-blob.md"
    p.parent.mkdir(parents=True)
    p.write_bytes(bytes(range(256)) * 100)
    assert _run_tolerates(demo_store, cli)["status"] == "proposed"


def test_invalid_utf8_in_log_and_memory(demo_store, cli):
    p = demo_store / "logs" / "2026" / "11" / "27" / "bad-utf8.md"
    p.parent.mkdir(parents=True)
    p.write_bytes(b"> remember that caf\xe9 is latin-1\n")
    (demo_store / "latin1_note.md").write_bytes(b"---\nname: x\ntype: user\n---\ncaf\xe9\n")
    out = _run_tolerates(demo_store, cli)
    assert out["status"] == "proposed"


@pytest.mark.slow
def test_fifty_megabyte_single_line_log(demo_store, cli):
    p = demo_store / "logs" / "2026" / "11" / "27" / "huge-line.md"
    p.parent.mkdir(parents=True)
    with p.open("wb") as fh:
        fh.write(b"> ")
        fh.write(b"a" * (50 * 1024 * 1024))
        fh.write(b"\n")
    assert _run_tolerates(demo_store, cli)["status"] == "proposed"


def test_malformed_frontmatter(demo_store, cli):
    (demo_store / "broken_fm.md").write_text("---\nname: [unclosed\ntype: : :\n---\nbody\n")
    (demo_store / "unterminated_fm.md").write_text("---\nname: never closed\nbody without end\n")
    _run_tolerates(demo_store, cli)


def test_symlink_pointing_outside(demo_store, tmp_path, cli):
    secret = tmp_path / "outside.md"
    secret.write_text("---\nname: outside\ntype: user\n---\nnot yours\n")
    os.symlink(secret, demo_store / "linked.md")
    outside_dir = tmp_path / "outdir"
    outside_dir.mkdir()
    (outside_dir / "x.md").write_text("outside folder\n")
    os.symlink(outside_dir, demo_store / "linkdir")
    before_secret = secret.read_bytes()
    out = _run_tolerates(demo_store, cli)
    assert out["status"] == "proposed"
    assert secret.read_bytes() == before_secret
    acc = cli("accept", "--store", str(demo_store), "--json")
    assert acc.code == 0, acc.stderr
    assert secret.read_bytes() == before_secret
    assert (outside_dir / "x.md").read_text() == "outside folder\n"
    assert os.path.islink(demo_store / "linked.md")
