"""Compare-and-swap of one file: an edit made before or during the swap is merged in or kept, never lost."""

from __future__ import annotations

import os

import pytest

from dream.store import cas


@pytest.fixture
def racing(monkeypatch):
    """`racing(edit)`: run `edit(path)` just before the next swap, inside the window after the last check."""
    def arm(edit):
        real = cas._swap
        calls = []

        def swap(path, data):
            if not calls:
                calls.append(path)
                edit(path)
            return real(path, data)
        monkeypatch.setattr(cas, "_swap", swap)
    return arm


def _append(text: bytes):
    def edit(path):
        with open(path, "ab") as fh:
            fh.write(text)
    return edit


def test_unchanged_file_is_swapped(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"one\ntwo\n")
    result = cas.compare_and_swap(path, b"one\ntwo\n", b"ONE\ntwo\n")
    assert path.read_bytes() == b"ONE\ntwo\n" and not result.merged and not result.conflict
    assert os.listdir(tmp_path) == ["a.md"]


def test_append_before_the_swap_is_merged(tmp_path):
    path = tmp_path / "a.md"
    path.write_bytes(b"one\ntwo\nagent\n")
    result = cas.compare_and_swap(path, b"one\ntwo\n", b"ONE\ntwo\n")
    assert path.read_bytes() == b"ONE\ntwo\nagent\n" and result.merged


@pytest.mark.parametrize("edit,expected", [
    (_append(b"agent\n"), b"ONE\ntwo\nagent\n"),  # in place: the exchange hands it back
    (lambda p: (p.with_name("x.tmp").write_bytes(b"one\ntwo\nagent\n"), os.replace(p.with_name("x.tmp"), p)),
     b"ONE\ntwo\nagent\n"),  # replaced atomically by the agent
])
def test_edit_inside_the_window_is_merged(tmp_path, racing, edit, expected):
    path = tmp_path / "a.md"
    path.write_bytes(b"one\ntwo\n")
    racing(edit)
    result = cas.compare_and_swap(path, b"one\ntwo\n", b"ONE\ntwo\n")
    assert path.read_bytes() == expected and result.merged and not result.conflict


def test_colliding_edit_inside_the_window_is_put_back(tmp_path, racing):
    path = tmp_path / "a.md"
    path.write_bytes(b"one\ntwo\n")
    racing(lambda p: p.write_bytes(b"AGENT\n"))
    result = cas.compare_and_swap(path, b"one\ntwo\n", b"ONE\ntwo\n")
    assert path.read_bytes() == b"AGENT\n" and result.conflict


def test_remove_keeps_a_file_edited_inside_the_window(tmp_path, racing):
    path = tmp_path / "a.md"
    path.write_bytes(b"one\n")
    racing(_append(b"agent\n"))
    result = cas.compare_and_swap(path, b"one\n", None)
    assert path.read_bytes() == b"one\nagent\n" and result.conflict


def test_new_file_never_replaces_one_created_meanwhile(tmp_path, racing):
    path = tmp_path / "new.md"
    racing(lambda p: p.write_bytes(b"agent made it\n"))
    result = cas.compare_and_swap(path, None, b"dream's\n")
    assert path.read_bytes() == b"agent made it\n" and result.conflict


def test_not_a_regular_file_is_refused(tmp_path):
    path = tmp_path / "fifo.md"
    os.mkfifo(path)
    with pytest.raises(cas.NotRegular):
        cas.compare_and_swap(path, b"x", b"y")


def test_without_an_exchange_an_append_inside_the_window_is_still_merged(tmp_path, racing, monkeypatch):
    monkeypatch.setattr(cas, "_renameat2", None)  # a file system or kernel without renameat2
    path = tmp_path / "a.md"
    path.write_bytes(b"one\ntwo\n")
    racing(_append(b"agent\n"))
    result = cas.compare_and_swap(path, b"one\ntwo\n", b"ONE\ntwo\n")
    assert path.read_bytes() == b"ONE\ntwo\nagent\n" and result.merged
    assert os.listdir(tmp_path) == ["a.md"]
