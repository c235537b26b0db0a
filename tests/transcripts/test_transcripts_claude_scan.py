"""Reading a Claude Code transcript block by block gives the session of reading it in one block.

`read_session` walks the lines of a file in blocks and skips tool results
after a look at their head. Whatever the block size, it must give exactly
the session that one block holding the whole file gives: the same entries,
record, skipped and malformed counts. Random transcripts mix the lines that
make the decision hard (tool results longer than a block, "tool_result"
inside other text, blank and whitespace lines, lines cut mid-JSON, no final
newline), and the block and head sizes are made small so that lines
straddle blocks.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from dream.transcripts import claude_code, common
from dream.transcripts.claude_code import read_session


def user(text: str) -> dict:
    return {"type": "user", "message": {"role": "user", "content": text}, "timestamp": "2026-05-01T10:00:00Z"}


def tool_result(size: int, spaced: bool) -> dict:
    block = {"type": "tool_result", "tool_use_id": "t1", "content": "x" * size}
    record = {"type": "user", "message": {"role": "user", "content": [block]}}
    if spaced:  # the key order and spacing the checks must see through
        return json.loads(json.dumps(record, indent=1))
    return record


def random_line(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.3:
        record = tool_result(rng.choice([10, 90, 300, 3000]), spaced=rng.random() < 0.3)
        text = json.dumps(record, indent=rng.choice([None, None, 1])).replace("\n", " ")
    elif kind < 0.45:
        text = json.dumps(user("look at tool_result and \"content\": [ {\"type\": \"tool_result\"} " * rng.randint(0, 9)))
    elif kind < 0.6:
        content = [{"type": "text", "text": "hello " * rng.randint(1, 200)},
                   {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls -la"}}]
        text = json.dumps({"type": "assistant", "message": {"role": "assistant", "content": content}})
    elif kind < 0.65:
        text = rng.choice(["", " ", "\t  ", " " * 70, "\r"])
    elif kind < 0.7:
        # Cut mid-JSON: skipped unparsed if judged a tool result, else counted malformed.
        text = json.dumps(tool_result(rng.choice([100, 400, 6000]), spaced=False))
        text = text[: rng.randint(1, len(text) - 1)]
    elif kind < 0.8:
        text = json.dumps(user("cut " * rng.randint(1, 80)))[: rng.randint(1, 60)]
    elif kind < 0.85:
        # Text first, then a tool result: only the first block decides, so the text is kept.
        blocks = [{"type": "text", "text": "mixed " * rng.randint(1, 30)}, tool_result(50, False)["message"]["content"][0]]
        text = json.dumps({"type": "user", "message": {"role": "user", "content": blocks}})
    elif kind < 0.87:
        # Not JSON, but shaped to probe the rule: a brace ends the search for the type.
        text = rng.choice(['{"message": {"content": [{"x": 1}, "type": "tool_result"]}}',
                           '{"message": {"content" : [ {"type" :"tool_result"} ]',
                           '{"content": "a", "message": {"content": [{"type": "tool_result"}]}}',
                           '{"message": {"content": [{"n": {"type": "tool_result"}}]}}'])
    elif kind < 0.9:
        text = json.dumps({"type": rng.choice(["system", "summary", "mystery"]), "summary": "s" * rng.randint(1, 50)})
    else:
        text = json.dumps(user("ünïcode テスト " * rng.randint(1, 40)), ensure_ascii=False)
    return text.encode()


def session_facts(path: Path) -> tuple:
    session = read_session(path, include_sidechains=True, max_chars=500)
    entries = [(e.kind, e.text, e.length, e.sidechain) for e in session.entries]
    return entries, session.records, session.skipped, session.malformed


@pytest.mark.parametrize("seed", range(8))
def test_random_transcripts_read_the_same_at_any_block_size(tmp_path: Path, monkeypatch, seed: int) -> None:
    rng = random.Random(seed)
    monkeypatch.setattr(claude_code, "_HEAD_BYTES", rng.choice([64, 100, 4096]))
    for trial in range(15):
        lines = [random_line(rng) for _ in range(rng.randint(0, 60))]
        ending = b"\n" if rng.random() < 0.7 else b""
        path = tmp_path / f"{seed}-{trial}.jsonl"
        path.write_bytes(b"\n".join(lines) + ending)
        with monkeypatch.context() as one_block:
            one_block.setattr(common, "BLOCK_CHUNK", 1 << 30)
            whole = session_facts(path)
        monkeypatch.setattr(common, "BLOCK_CHUNK", rng.choice([1, 64, 1000, 5000]))
        assert session_facts(path) == whole, path.read_bytes()[:2000]


def test_a_tool_result_longer_than_many_blocks_is_skipped_whole(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(common, "BLOCK_CHUNK", claude_code._HEAD_BYTES + 10)
    path = tmp_path / "big.jsonl"
    lines = [json.dumps(user("before")), json.dumps(tool_result(200_000, spaced=False)), json.dumps(user("after"))]
    path.write_text("\n".join(lines))
    entries, records, skipped, malformed = session_facts(path)
    assert [text for _, text, _, _ in entries] == ["before", "after"]
    assert (records, skipped, malformed) == (3, 0, 0)


def test_an_unreadable_transcript_raises_oserror(tmp_path: Path) -> None:
    folder = tmp_path / "a-folder.jsonl"
    folder.mkdir()
    with pytest.raises(OSError):
        read_session(folder, False, 500)
