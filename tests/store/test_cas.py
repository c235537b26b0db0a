"""Compare-and-swap of one file: an edit made before or during the swap is merged in or kept, never lost."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from dream.store import cas
from dream.store.regular import NotRegular


@pytest.fixture
def racing(monkeypatch):
    """`racing(edit)`: run `edit(path)` once, right after the last check before a swap: inside the window."""
    def arm(edit):
        real = cas._same_identity
        calls = []

        def checked(path, seen):
            same = real(path, seen)
            if same and not calls:
                calls.append(path)
                edit(path)
            return same
        monkeypatch.setattr(cas, "_same_identity", checked)
    return arm


def _in_child(code: str):
    """An edit by another process (as an agent's is), given time to reach its open(): with dream's lease on
    the file that open waits until the swap is done, and then lands on the file swapped out."""
    def edit(path):
        subprocess.Popen([sys.executable, "-c", code.format(path=str(path))])
        time.sleep(0.5)
    return edit


def _append(text: bytes):
    return _in_child("open({path!r}, 'ab').write(" + repr(text) + ")")


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
    racing(_in_child("open({path!r}, 'wb').write(b'AGENT\\n')"))
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
    with pytest.raises(NotRegular):
        cas.compare_and_swap(path, b"x", b"y")


def test_without_an_exchange_an_append_inside_the_window_is_still_merged(tmp_path, racing, monkeypatch):
    monkeypatch.setattr(cas, "_renameat2", None)  # a file system or kernel without renameat2
    path = tmp_path / "a.md"
    path.write_bytes(b"one\ntwo\n")
    racing(_append(b"agent\n"))
    result = cas.compare_and_swap(path, b"one\ntwo\n", b"ONE\ntwo\n")
    assert path.read_bytes() == b"ONE\ntwo\nagent\n" and result.merged
    assert os.listdir(tmp_path) == ["a.md"]


# ------------------------------------------------------------------ taking a write back


@pytest.mark.parametrize("written, now, before, expected", [
    (b"new\n", b"new\n", b"old\n", b"old\n"),  # untouched since: the pre-image
    (b"new\n", b"new\nappended\n", b"old\n", b"old\nappended\n"),  # an append stays
    (b"a\nnew\n", b"a\nnew, edited\n", b"a\nold\n", b"a\nold\nnew, edited\n"),  # an edit of dream's line: kept
    (None, b"recreated\n", b"old\n", b"old\nrecreated\n"),  # dream deleted it, the agent wrote it again
    (b"made\n", b"made\nagent\n", None, b"agent\n"),  # dream made it: only the agent's line stays
    (b"made\n", b"made\n", None, None),  # dream made it, nobody touched it: gone again
])
def test_undo_write_keeps_every_line_another_writer_added(written, now, before, expected):
    assert cas.undo_write(written, now, before) == expected


@pytest.mark.parametrize("now, written, before, expected", [
    (b"new\n", b"new\n", b"old\n", True),
    (b"new\nagent\n", b"new\n", b"old\n", True),  # dream's bytes, then a line of the agent's
    (b"old\nagent\n", b"new\n", b"old\n", False),  # the old file with the agent's line: dream never wrote it
    (b"a\nb\nagent\n", b"a\n", b"a\nb\n", False),  # dream removed b; it is back: not dream's bytes
    (b"agent\n", None, b"old\n", True),  # dream removed it, the agent made it again
    (b"old\n", None, b"old\n", False),  # never removed
])
def test_written_then_added_to_tells_dreams_write_from_the_file_it_replaced(now, written, before, expected):
    assert cas.written_then_added_to(now, written, before) is expected


def test_put_back_takes_back_a_write_keeping_an_append_inside_the_window(tmp_path, racing):
    path = tmp_path / "m.md"
    path.write_bytes(b"# dream's\n")
    racing(_append(b"- appended\n"))
    assert cas.put_back(path, b"# dream's\n", b"# before\n")
    assert path.read_bytes() == b"# before\n- appended\n"
