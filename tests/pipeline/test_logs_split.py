"""Gathering splits logs with polars string operations: check it against a plain reading of the format.

The reference below applies the module docstring's rules one file at a time
with Python's `re`; random logs built from the tricky pieces (prefixes
without a space, blank lines, CRLF, Unicode spaces at the end, invalid
UTF-8, NUL bytes) must give the same rows and warnings, whatever the batch
size.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from dream.pipeline import gather as logs
from dream.pipeline.gather import read_sessions
from dream.store.sessions import scan_sessions

PIECES = ["\n", "\n", "\n", "> ", "< ", ". ", ">", "<", ".", " ", "\t", "\r\n", "\r", "x", "hello",
          "é", "\u3000", "\u2028", "\x85", "\xa0", "\x1c", "テスト", "\x0b", "\x0c"]
# What polars' strip_chars_end() (Rust's char::is_whitespace) strips.
RUST_SPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
ROLE = {">": "user", "<": "assistant", ".": "tool"}


def reference(session: str, data: bytes) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(session, role, text) rows and warnings for one file, straight from the rules."""
    if b"\x00" in data:
        return [], ["binary"]
    data = data.replace(b"\r\n", b"\n")
    warnings = []
    if data[:2] not in (b"> ", b"< ", b". "):
        match = re.search(rb"\n[<>.] ", data)
        head, data = (data, b"") if match is None else (data[: match.start()], data[match.start() + 1 :])
        if head.strip():
            warnings.append("orphan")
    if not data:
        return [], warnings
    try:
        text = data.decode()
    except UnicodeDecodeError:
        text = data.decode(errors="replace")
        warnings.append("utf8")
    pieces = re.sub(r"\n+([<>.] )", "\x00\\1", text.rstrip(RUST_SPACE)).split("\x00")
    return [(session, ROLE[p[0]], p[2:]) for p in pieces], warnings


def random_log(rng: random.Random, most_pieces: int = 25) -> bytes:
    parts = []
    for _ in range(rng.randint(0, most_pieces)):
        r = rng.random()
        parts.append(rng.choice([b"\xff", b"\xe3\x81", b"\x00"]) if r < 0.02 else rng.choice(PIECES).encode())
    return b"".join(parts)


def kind(warning: str) -> str:
    return "binary" if "binary" in warning else "utf8" if "UTF-8" in warning else "orphan"


@pytest.mark.parametrize("seed", range(6))
def test_random_logs_match_the_reference(tmp_path: Path, monkeypatch, seed: int) -> None:
    check_random_logs(tmp_path, monkeypatch, random.Random(seed), most_pieces=25)


@pytest.mark.parametrize("seed", range(3))
def test_long_random_logs_match_the_reference(tmp_path: Path, monkeypatch, seed: int) -> None:
    """Files of a few kilobytes: many entries, blank lines and wide spaces per file."""
    check_random_logs(tmp_path, monkeypatch, random.Random(100 + seed), most_pieces=2000)


@pytest.mark.parametrize("seed", range(3))
def test_files_cut_into_many_pieces_match_the_reference(tmp_path: Path, monkeypatch, seed: int) -> None:
    """A file longer than a batch is cut where an entry starts; the pieces must give the file's rows."""
    check_random_logs(tmp_path, monkeypatch, random.Random(200 + seed), most_pieces=2000, batch_bytes=7)


def check_random_logs(tmp_path: Path, monkeypatch, rng: random.Random, most_pieces: int,
                      batch_bytes: int | None = None) -> None:
    monkeypatch.setattr(logs, "_BATCH_BYTES", batch_bytes or rng.choice([10, 100, 1 << 20]))
    for trial in range(40):
        store = tmp_path / f"t{trial}"
        for i in range(rng.randint(1, 6)):
            path = store / "logs" / "2025" / "03" / f"{rng.randint(1, 3):02d}" / f"s{rng.randint(0, 2)}-f{i}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(random_log(rng, most_pieces))
        files = scan_sessions(store)
        expected_rows, expected_warnings = [], []
        utf8 = []
        for f in files:
            rows, warnings = reference(f.session_id, f.path.read_bytes())
            expected_rows += rows
            expected_warnings += [(f.rel, w) for w in warnings if w != "utf8"]
            utf8 += [(f.rel, w) for w in warnings if w == "utf8"]
        gathered = read_sessions(files, max_entry_chars=10_000)
        assert gathered.sessions.select("session", "role", "text").rows() == expected_rows, files
        got = [(w.split(": ", 1)[0], kind(w)) for w in gathered.warnings]
        assert got == expected_warnings + utf8  # reading problems in file order, then UTF-8 ones


def test_a_file_that_grew_after_the_scan_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "logs/2025/03/04/s1-grows.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"> one\n")
    (tmp_path / "logs/2025/03/04/s2-next.md").write_bytes(b"< after\n")
    files = scan_sessions(tmp_path)
    path.write_bytes(b"> one\n< two, written after the scan\n" + b"more\n" * 20_000)
    rows = read_sessions(files, max_entry_chars=10**6).sessions.select("session", "seq", "text").rows()
    assert rows[:2] == [("s1", 0, "one"), ("s1", 1, "two, written after the scan" + "\nmore" * 20_000)]
    assert rows[2] == ("s2", 0, "after")


def test_a_file_that_shrank_after_the_scan_gives_what_it_holds_now(tmp_path: Path) -> None:
    path = tmp_path / "logs/2025/03/04/s1-shrinks.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"> one\n< two\n< three\n")
    files = scan_sessions(tmp_path)
    path.write_bytes(b"> one\n")
    assert read_sessions(files).sessions.get_column("text").to_list() == ["one"]


def test_seq_and_files_across_many_batches(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(logs, "_BATCH_BYTES", 16)
    for day, name, text in [("01", "s1-a.md", "> a\n< b\n"), ("02", "s2-b.md", "> c\n"),
                            ("03", "s1-a.md", "> d\n"), ("04", "s3-c.md", "")]:
        path = tmp_path / "logs/2025/03" / day / name
        path.parent.mkdir(parents=True)
        path.write_text(text)
    gathered = read_sessions(scan_sessions(tmp_path))
    assert gathered.sessions.select("session", "seq", "role", "text").rows() == [
        ("s1", 0, "user", "a"), ("s1", 1, "assistant", "b"), ("s2", 0, "user", "c"), ("s1", 2, "user", "d"),
    ]
    assert [f.session_id for f in gathered.files] == ["s1", "s2", "s1", "s3"]
