"""Activity logs: scanning by path and mtime, parsing into exact rows, bad input."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import dream
from dream.pipeline.gather import read_sessions
from dream.store.sessions import scan_sessions, split_session_name
from dream.redaction.redact import redact

UUID = "123e4567-e89b-12d3-a456-426614174000"


def write_log(store: Path, day: str, name: str, data: bytes | str) -> Path:
    path = store / "logs" / day / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


NOBODY = 65534


@pytest.fixture
def unreadable_store(tmp_path_factory) -> Iterator[Path]:
    """A store that an unprivileged user can list but whose 0o000 files it cannot read.

    Root ignores file modes, and CI runs as root; so the code under test runs in
    a child process as `nobody` (see run_unprivileged). pytest's tmp dirs are
    0o700 and owned by root, so the store lives in a fresh dir under /tmp,
    owned by that user.
    """
    store = Path(tempfile.mkdtemp(prefix="dream-perm-"))
    if os.geteuid() == 0:
        os.chown(store, NOBODY, NOBODY)
    try:
        yield store
    finally:
        for p in store.rglob("*"):
            if p.is_file():
                p.chmod(0o644)
        shutil.rmtree(store)


@functools.cache
def nobody_can_import_dream() -> bool:
    probe = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", "import dream"]
    return subprocess.run(probe, check=False, capture_output=True, timeout=60, cwd="/").returncode == 0


def run_unprivileged(store: Path, code: str) -> dict:
    """Run `code` (which sets `result`) in a child without the power to bypass file modes.

    As root the child drops to nobody with no supplementary groups; otherwise it
    runs as the current user, for whom 0o000 is already enforced.
    """
    script = f"import json, os, sys\nfrom pathlib import Path\nstore = Path(sys.argv[1])\n{code}\nprint(json.dumps(result))\n"
    command = [sys.executable, "-c", script, str(store)]
    if os.geteuid() == 0:
        for p in store.rglob("*"):
            if p.is_dir():
                os.chown(p, NOBODY, NOBODY)
        # setpriv (util-linux) rather than subprocess's user=: it can start the
        # venv's interpreter, which links into root's 0o700 home.
        command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *command]
        if not nobody_can_import_dream():
            pytest.skip(f"nobody cannot import dream from {Path(dream.__file__).parent}: a folder on its path "
                        f"is closed to other users (a clone under a 0700 folder)")
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rows(store: Path, **kwargs) -> list[tuple]:
    gathered = read_sessions(scan_sessions(store), **kwargs)
    return gathered.sessions.select("session", "seq", "role", "text").rows()


# ---------------------------------------------------------------- names, paths


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        (f"{UUID}-fix-the-login-bug", (UUID, "fix-the-login-bug")),
        (UUID, (UUID, "")),
        ("a1b2c3-refactor-db", ("a1b2c3", "refactor-db")),
        ("session42", ("session42", "")),
        # Not a UUID (too short a last group): id is before the first dash.
        ("123e4567-e89b-12d3-a456-42661417400-x", ("123e4567", "e89b-12d3-a456-42661417400-x")),
    ],
)
def test_split_session_name(stem: str, expected: tuple[str, str]) -> None:
    assert split_session_name(stem) == expected


def test_scan_reads_date_id_slug_and_title_from_the_path(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", f"{UUID}-fix-login-bug.md", "> hi\n")
    write_log(tmp_path, "2024/12/31", "abc-new-year.md", "> hi\n")
    files = scan_sessions(tmp_path)
    assert [(f.rel, f.session_id, f.slug, f.date, f.title) for f in files] == [
        ("logs/2024/12/31/abc-new-year.md", "abc", "new-year", dt.date(2024, 12, 31), "new year"),
        (f"logs/2025/03/04/{UUID}-fix-login-bug.md", UUID, "fix-login-bug", dt.date(2025, 3, 4), "fix login bug"),
    ]
    assert files[0].path == (tmp_path / files[0].rel).absolute()
    assert files[0].size == 5
    assert files.warnings == []


def test_scan_of_a_store_without_logs_is_empty(tmp_path: Path) -> None:
    assert scan_sessions(tmp_path) == []


def test_scan_skips_paths_outside_the_layout_with_warnings(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", "good-one.md", "> hi\n")
    write_log(tmp_path, "2025/13/01", "bad-month.md", "> hi\n")  # no 13th month
    write_log(tmp_path, "2025/3/04", "short-month.md", "> hi\n")  # not MM
    write_log(tmp_path, "notes", "x-y.md", "> hi\n")  # not YYYY
    write_log(tmp_path, "2025/03/04", "notes.txt", "hello")  # not .md
    write_log(tmp_path, "2025/03/04", "-no-id.md", "> hi\n")  # empty id
    (tmp_path / "logs" / "README.md").write_text("about logs")
    target = write_log(tmp_path, "2025/03/05", "real-target.md", "> hi\n")
    (tmp_path / "logs/2025/03/04/link-to-other.md").symlink_to(target)
    (tmp_path / "logs/2025/linked").symlink_to(tmp_path / "logs/2025/03")
    files = scan_sessions(tmp_path)
    assert [f.rel for f in files] == ["logs/2025/03/04/good-one.md", "logs/2025/03/05/real-target.md"]
    text = "\n".join(files.warnings)
    for bad in ("2025/13/01", "2025/3", "logs/notes", "notes.txt", "-no-id.md", "logs/README.md",
                "link-to-other.md", "logs/2025/linked"):
        assert bad in text, bad
    assert all(w.count("\n") == 0 for w in files.warnings)


def test_since_keeps_only_files_modified_after_it(tmp_path: Path) -> None:
    old = write_log(tmp_path, "2025/01/01", "old-a.md", "> a\n")
    new = write_log(tmp_path, "2025/01/02", "new-b.md", "> b\n")
    edge = write_log(tmp_path, "2025/01/03", "edge-c.md", "> c\n")
    since = 1_700_000_000.0
    os.utime(old, (since - 100, since - 100))
    os.utime(new, (since + 100, since + 100))
    os.utime(edge, (since, since))  # not strictly newer
    assert [f.rel for f in scan_sessions(tmp_path, since=since)] == ["logs/2025/01/02/new-b.md"]
    assert len(scan_sessions(tmp_path)) == 3
    assert scan_sessions(tmp_path, since=since)[0].mtime == since + 100


def test_scan_never_reads_files(unreadable_store: Path) -> None:
    path = write_log(unreadable_store, "2025/01/01", "s-x.md", "> a\n")
    path.chmod(0o000)
    out = run_unprivileged(
        unreadable_store,
        "from dream.store.sessions import scan_sessions\n"
        "files = scan_sessions(store)\n"
        "result = {'readable': os.access(store / 'logs/2025/01/01/s-x.md', os.R_OK),"
        " 'rels': [f.rel for f in files], 'sizes': [f.size for f in files], 'warnings': files.warnings}\n",
    )
    assert out["readable"] is False  # the check below would prove nothing otherwise
    assert out == {"readable": False, "rels": ["logs/2025/01/01/s-x.md"], "sizes": [4], "warnings": []}


# ---------------------------------------------------------------- parsing


def test_prefixes_continuations_blank_lines_and_unknown_prefixes(tmp_path: Path) -> None:
    write_log(
        tmp_path,
        "2025/03/04",
        "s1-demo.md",
        "> fix the login bug\n"
        "< Looking at it.\n"
        "The cause is a stale token.\n"
        "\n"
        "1. refresh it\n"
        ">no space is a continuation\n"
        "# heading\n"
        ". Read src/auth.py (120 lines)\n"
        ". Edit src/auth.py\n"
        "> \n"
        "> thanks\n"
        "\n"
        "\n",
    )
    assert rows(tmp_path) == [
        ("s1", 0, "user", "fix the login bug"),
        ("s1", 1, "assistant", "Looking at it.\nThe cause is a stale token.\n\n1. refresh it\n>no space is a continuation\n# heading"),
        ("s1", 2, "tool", "Read src/auth.py (120 lines)"),
        ("s1", 3, "tool", "Edit src/auth.py"),
        ("s1", 4, "user", ""),
        ("s1", 5, "user", "thanks"),
    ]


def test_crlf_and_missing_final_newline(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", "s1-crlf.md", "> one\r\n< two\r\nmore\r\n. three")
    assert rows(tmp_path) == [
        ("s1", 0, "user", "one"),
        ("s1", 1, "assistant", "two\nmore"),
        ("s1", 2, "tool", "three"),
    ]


def test_frame_schema_dates_and_order_across_files(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/05", "b-later.md", "> later\n")
    write_log(tmp_path, "2025/03/04", "a-first.md", "> first\n< reply\n")
    write_log(tmp_path, "2025/03/04", f"{UUID}-uuid-session.md", ". Bash ls\n")
    gathered = read_sessions(scan_sessions(tmp_path))
    frame = gathered.sessions
    assert frame.schema == pl.Schema(
        {"session": pl.Utf8, "date": pl.Date, "seq": pl.Int64, "role": pl.Utf8, "text": pl.Utf8}
    )
    # Sorted by (date, rel): "123e…" sorts before "a-first.md".
    assert frame.rows() == [
        (UUID, dt.date(2025, 3, 4), 0, "tool", "Bash ls"),
        ("a", dt.date(2025, 3, 4), 0, "user", "first"),
        ("a", dt.date(2025, 3, 4), 1, "assistant", "reply"),
        ("b", dt.date(2025, 3, 5), 0, "user", "later"),
    ]
    assert [f.session_id for f in gathered.files] == [UUID, "a", "b"]
    assert gathered.warnings == [] and gathered.redactions == 0


def test_seq_continues_when_a_session_spans_two_days(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", "s9-late-night.md", "> a\n< b\n")
    write_log(tmp_path, "2025/03/05", "s9-late-night.md", "> c\n")
    assert [r[1] for r in rows(tmp_path)] == [0, 1, 2]


def test_text_before_the_first_entry_is_dropped_with_a_warning(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", "s1-orphan.md", "stray line\nanother\n> real entry\n")
    write_log(tmp_path, "2025/03/04", "s2-blank-start.md", "\n\n< fine\n")
    gathered = read_sessions(scan_sessions(tmp_path))
    assert gathered.sessions.select("session", "text").rows() == [("s1", "real entry"), ("s2", "fine")]
    assert len(gathered.warnings) == 1
    assert "s1-orphan.md" in gathered.warnings[0] and "dropped" in gathered.warnings[0]


def test_secrets_are_redacted_and_counted(tmp_path: Path) -> None:
    write_log(
        tmp_path,
        "2025/03/04",
        "s1-secrets.md",
        "> my key is AKIAIOSFODNN7EXAMPLE\n"
        "< use postgres://app:hunter2@db/app\n"
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
    )
    gathered = read_sessions(scan_sessions(tmp_path))
    assert gathered.sessions.get_column("text").to_list() == [
        "my key is [REDACTED:aws-access-key-id]",
        "use postgres://app:[REDACTED:url-password]@db/app\n[REDACTED:private-key]",
    ]
    assert gathered.redactions == 3


def test_progress_is_reported_up_to_the_total(tmp_path: Path) -> None:
    for i in range(3):
        write_log(tmp_path, "2025/03/04", f"s{i}-x.md", "> hello\n" * (i + 1))
    calls: list[tuple[int, int]] = []
    read_sessions(scan_sessions(tmp_path), on_progress=lambda done, total: calls.append((done, total)))
    total = 8 + 16 + 24
    assert calls and calls[-1] == (total, total)
    assert all(t == total and 0 <= d <= total for d, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_no_files_gives_an_empty_frame_with_the_schema() -> None:
    gathered = read_sessions([])
    assert gathered.sessions.height == 0
    assert gathered.sessions.columns == ["session", "date", "seq", "role", "text"]


# ---------------------------------------------------------------- bad input


def test_bad_files_are_skipped_or_repaired_with_warnings(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", "bin-image.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    write_log(tmp_path, "2025/03/04", "lat1-latin1.md", "> café\n".encode("latin-1"))
    write_log(tmp_path, "2025/03/04", "empty-nothing.md", b"")
    write_log(tmp_path, "2025/03/04", "ok-fine.md", "> fine\n")
    gone = write_log(tmp_path, "2025/03/04", "gone-deleted.md", "> bye\n")
    files = scan_sessions(tmp_path)
    gone.unlink()  # disappears between scan and read
    before = {p: p.read_bytes() for p in (tmp_path / "logs").rglob("*.md")}

    gathered = read_sessions(files)

    assert gathered.sessions.select("session", "text").rows() == [("lat1", "caf\ufffd"), ("ok", "fine")]
    by_file = {w.split(":")[0].rsplit("/", 1)[-1]: w for w in gathered.warnings}
    assert set(by_file) == {"bin-image.md", "lat1-latin1.md", "gone-deleted.md"}
    assert "binary" in by_file["bin-image.md"]
    assert "UTF-8" in by_file["lat1-latin1.md"]
    assert "cannot open" in by_file["gone-deleted.md"]
    assert [f.session_id for f in gathered.files] == ["empty", "lat1", "ok"]
    assert {p: p.read_bytes() for p in (tmp_path / "logs").rglob("*.md")} == before


def test_unreadable_file_is_skipped_with_a_warning(unreadable_store: Path) -> None:
    path = write_log(unreadable_store, "2025/03/04", "s1-secret.md", "> hidden\n")
    write_log(unreadable_store, "2025/03/04", "s2-open.md", "> visible\n")
    path.chmod(0o000)
    before = path.read_bytes()
    out = run_unprivileged(
        unreadable_store,
        "from dream.pipeline.gather import read_sessions\nfrom dream.store.sessions import scan_sessions\n"
        "gathered = read_sessions(scan_sessions(store))\n"
        "result = {'readable': os.access(store / 'logs/2025/03/04/s1-secret.md', os.R_OK),"
        " 'texts': gathered.sessions.get_column('text').to_list(),"
        " 'ids': [f.session_id for f in gathered.files], 'warnings': gathered.warnings}\n",
    )
    assert out["readable"] is False
    assert out["texts"] == ["visible"]
    assert out["ids"] == ["s2"]
    assert out["warnings"] == ["logs/2025/03/04/s1-secret.md: cannot open (Permission denied), skipped"]
    assert path.read_bytes() == before and path.stat().st_mode & 0o777 == 0


def test_long_entries_are_cut_with_a_marker(tmp_path: Path) -> None:
    write_log(tmp_path, "2025/03/04", "s1-long.md", "> " + "é" * 30 + "\n< short\n< " + "ü" * 10 + "\n")
    assert rows(tmp_path, max_entry_chars=10) == [
        ("s1", 0, "user", "é" * 10 + " […cut 20 chars]"),
        ("s1", 1, "assistant", "short"),
        ("s1", 2, "assistant", "ü" * 10),  # 20 bytes but 10 characters: not cut
    ]


def test_gathered_text_matches_redact_on_each_entry(tmp_path: Path) -> None:
    entries = [
        "> deploy with ghp_" + "Ab12" * 9,
        "< done; see https://ci.example.com/run/1",
        "< Authorization: Basic dXNlcjpwYXNz and sk-learn-compatible code",
        ". Bash curl -H 'Authorization: Bearer " + "t0k3n" * 5 + "'",
    ]
    write_log(tmp_path, "2025/03/04", "s1-a.md", "\n".join(entries[:2]) + "\n")
    write_log(tmp_path, "2025/03/05", "s2-b.md", "\n".join(entries[2:]) + "\n")
    gathered = read_sessions(scan_sessions(tmp_path))
    expected = [redact(e[2:]) for e in entries]
    assert gathered.sessions.get_column("text").to_list() == [t for t, _ in expected]
    assert gathered.redactions == sum(n for _, n in expected) == 3


@pytest.mark.slow
def test_a_50_mb_single_line_log_is_read_and_cut(tmp_path: Path) -> None:
    # A secret across the cut (at 2,000 characters) is redacted whole before the cut; one 50 MB
    # further on is never looked at (only REDACT_MARGIN past the cut is redacted), nor kept.
    secret, marker = "AKIAIOSFODNN7EXAMPLE", "[REDACTED:aws-access-key-id]"
    entry = "word " * 399 + secret + " " + "word " * (50 * 1024 * 1024 // 5) + secret
    write_log(tmp_path, "2025/03/04", "big-one-line.md", b"< " + entry.encode())
    gathered = read_sessions(scan_sessions(tmp_path))
    (text,) = gathered.sessions.get_column("text").to_list()
    kept = 2000
    cut = len(entry) + len(marker) - len(secret) - kept  # the characters the table does not hold
    assert text == ("word " * 399 + marker)[:kept] + f" […cut {cut} chars]"
    assert gathered.redactions == 1


def test_a_file_that_fails_to_read_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = write_log(tmp_path, "2025/03/04", "s1-becomes-folder.md", "> a\n")
    write_log(tmp_path, "2025/03/04", "s2-fine.md", "> b\n")
    files = scan_sessions(tmp_path)
    path.unlink()
    path.mkdir()  # opening works, read() fails with EISDIR (also as root)
    gathered = read_sessions(files)
    assert gathered.sessions.get_column("text").to_list() == ["b"]
    assert len(gathered.warnings) == 1
    assert gathered.warnings[0] == "logs/2025/03/04/s1-becomes-folder.md: a folder, not a regular file, skipped"
