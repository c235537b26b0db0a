"""Shared pieces: line reading across buffer edges, rendering, slugs."""

from __future__ import annotations

import random

import pytest

from dream.transcripts import common
from dream.transcripts.common import Entry, iter_lines, make_entry
from dream.transcripts.render import format_entry, render_log


def random_files(tmp_path, seed: int, count: int = 60):
    """Files of random JSON-ish lines, half of them without a final newline: (path, bytes)."""
    rng = random.Random(seed)
    for trial in range(count):
        lines = [bytes(rng.choice(b'ab{}"\\') for _ in range(rng.choice([0, 1, 6, 70, 300])))
                 for _ in range(rng.randint(0, 25))]
        data = b"\n".join(lines) + (b"\n" if trial % 2 else b"")
        path = tmp_path / f"t{seed}-{trial}.jsonl"
        path.write_bytes(data)
        yield path, data


@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
def test_iter_lines_matches_split_at_any_block_size(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(common, "BLOCK_CHUNK", chunk)
    for path, data in random_files(tmp_path, chunk):
        expected = data.split(b"\n")
        if expected and expected[-1] == b"":
            expected.pop()
        assert [bytes(buf[start:end]) for buf, start, end in iter_lines(path)] == expected


@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
@pytest.mark.parametrize("head", [1, 5, 40])
def test_iter_lines_passes_over_skipped_lines_at_any_block_size(tmp_path, monkeypatch, chunk, head):
    """A line `skip` judges from its head comes out once, as SKIPPED; every other line whole."""
    monkeypatch.setattr(common, "BLOCK_CHUNK", chunk)

    def skip(buf, start, end):  # judged from the head alone, as iter_lines requires
        return buf.count(b"{", start, min(end, start + head)) >= 2

    for path, data in random_files(tmp_path, chunk * head):
        lines = data.split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        expected = [common.SKIPPED if skip(line, 0, len(line)) else line for line in lines]
        got = [end if end == common.SKIPPED else bytes(buf[start:end]) for buf, start, end in iter_lines(path, skip, head)]
        assert got == expected


def test_format_entry_indents_continuations_and_drops_blank_lines():
    assert format_entry("< ", "  one\n\n> two\r\n. three  \n") == "< one\n  > two\n  . three"
    assert format_entry("> ", "single") == "> single"


def test_cut_marker_counts_the_original_length():
    entry = make_entry("assistant", "a" * 20_000, max_chars=100)
    assert len(entry.text) < 20_000  # bounded early, before redaction
    text, _ = render_log([entry], 100)
    assert text == "< " + "a" * 100 + " […cut 19900 chars]\n"


def test_tool_lines_are_one_short_line():
    entry = Entry("tool", "Bash " + "echo x && " * 100, 1005)
    text, _ = render_log([entry], 2000)
    assert text.startswith(". Bash echo x && echo x") and text.endswith("…\n")
    assert len(text) <= 2 + 200 + 1
