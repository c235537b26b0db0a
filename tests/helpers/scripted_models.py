"""Scripted models that work the way current models do, for the strict test server (fake_anthropic.py).

A real model thinks every turn, batches several tool calls a turn (but no edit
in the same turn as the reads it rests on: it has not seen them yet), often opens
with a text preamble ("I'll start by reviewing the index.") and now and then
asks a question instead of going on. `ScriptedModel` plays such a model from
what the request shows it: the topic files listed in tonight's first message
and its sessions (each read only when its text is not already there in
full), and the paging hints (``[more: ...]``) of the results it gets. The
shapes differ in how much they read, how wide their turns are and how much
they think:

- `diligent`: reads every topic file and every session not shown in full,
  three calls a turn, then edits;
- `lazy`: reads one session, makes one edit;
- `wide`: like diligent, ten calls a turn;
- `thinking_heavy`: six calls a turn and 6,000 thinking tokens each;
- `Rereader`: first re-reads every file and session its first message shows
  in full (and, when it `heeds`, stops once told that a re-read returns only
  a note).

Diligent and wide models end with a `finish` call beside their last edits, as
a model told of the tool would; lazy and thinking-heavy ones end with a
text-only summary turn, as a model that ignores the tool does.

A model is one callable; play it for every step: ``fake.play(*[model] * 400)``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from typing import Any

from helpers.fake_anthropic import Reply, memory, text, tool_use

PREAMBLE = "I'll start by reviewing the index and the session digests."
QUESTION = "Before I merge anything: should I keep the older deploy notes, or may I fold them into one file?"


@dataclass
class ScriptedModel:
    calls_per_turn: int = 3
    thinking: tuple[int, int] = (1000, 2000)  # tokens thought per turn, drawn from this range
    read_topics: bool = True  # view the topic files the first message does not show in full
    read_sessions: int | None = None  # how many sessions to read (None: all)
    edits: int = 6  # str_replace edits, one per topic file, after the reads
    preamble: bool = True  # the first reply is text only
    question_at: int | None = None  # the turn (1-based) that asks a question instead of going on
    finish: bool = True  # call `finish` with the summary beside the last edits (else: a text-only summary turn)
    seed: int = 7
    turns: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    _plan: list[dict[str, Any]] | None = None
    _edited: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.turns += 1
        self.requests.append(body)
        rng = random.Random(self.seed * 1000 + self.turns)
        think = rng.randint(*self.thinking) if self.thinking[1] else 0
        if self._plan is None:
            self._plan = self._make_plan(_first_text(body))
            if self.preamble:
                return Reply([text(PREAMBLE)], stop_reason="end_turn", thinking=think, output_tokens=20)
        if self.question_at == self.turns:
            return Reply([text(QUESTION)], stop_reason="end_turn", thinking=think, output_tokens=30)
        self._plan[:0] = _hints(body)
        if self._plan:
            batch = self._next_batch()
            if self.finish and not self._plan and _edits(batch[-1]):  # the last edits: finish beside them
                batch.append(tool_use("finish", summary=self._summary()))
            return Reply([text("Reading on."), *batch], thinking=think, output_tokens=25 + 60 * len(batch))
        summary = self._summary()
        return Reply([text(summary)], thinking=think, output_tokens=40 + 25 * summary.count("\n"))

    def _summary(self) -> str:
        lines = [f"- dated {path.rsplit('/', 1)[1]}: last reviewed on the night of the sessions" for path in self._edited]
        return "\n".join(lines) or "Nothing needed changing."

    def _next_batch(self) -> list[dict[str, Any]]:
        """Up to `calls_per_turn` calls of one kind: a model edits only after it has seen what it read."""
        assert self._plan is not None
        kind = _edits(self._plan[0])
        size = next((i for i, c in enumerate(self._plan[: self.calls_per_turn]) if _edits(c) != kind),
                    min(self.calls_per_turn, len(self._plan)))
        batch, self._plan = self._plan[:size], self._plan[size:]
        return batch

    def _make_plan(self, first: str) -> list[dict[str, Any]]:
        topics = re.findall(r"^- `(/memories/(?!MEMORY\.md)[^`]+\.md)`", first, flags=re.M)
        shown = set(re.findall(r"^#### `(/memories/[^`]+)`", first, flags=re.M))
        in_full = set(re.findall(r"^### `([^`]+)` — .* entries, in full$", first, flags=re.M))
        sessions = [s for s in re.findall(r"^### `([^`]+)` — ", first, flags=re.M) if s not in in_full]
        plan = [memory("view", path=p) for p in topics if self.read_topics and p not in shown]
        wanted = sessions if self.read_sessions is None else sessions[: self.read_sessions]
        plan += [tool_use("read_session", session_id=sid, count=200) for sid in wanted]
        for path in [p for p in topics if "/team/" not in p][: self.edits]:
            self._edited.append(path)
            plan.append(memory("str_replace", path=path, old_str="\ntype: ", new_str="\nreviewed: 2026-11-30\ntype: "))
        return plan


REREAD_NOTE = "re-reading one returns only a note like this one"  # what dream answers a re-read of the first message


@dataclass
class Rereader(ScriptedModel):
    """First views every topic file and reads every session the first message already shows in full, then works
    as `ScriptedModel` does. One that `heeds` drops its remaining re-reads once a result says they return only a
    note (as a model told so would); one that does not re-reads everything regardless."""

    heeds: bool = True
    _rereads: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply:
        if self.heeds and self._plan and any(REREAD_NOTE in text for text in _result_texts(body)):
            self._plan = [c for c in self._plan if not any(c is r for r in self._rereads)]
        return super().__call__(body)

    def _make_plan(self, first: str) -> list[dict[str, Any]]:
        shown = re.findall(r"^#### `(/memories/[^`]+)`", first, flags=re.M)
        in_full = re.findall(r"^### `([^`]+)` — .* entries, in full$", first, flags=re.M)
        self._rereads = [*(memory("view", path=p) for p in shown),
                         *(tool_use("read_session", session_id=s, count=200) for s in in_full)]
        return [*self._rereads, *super()._make_plan(first)]


def diligent(**kw: Any) -> ScriptedModel:
    return ScriptedModel(calls_per_turn=3, **kw)


def lazy(**kw: Any) -> ScriptedModel:
    return ScriptedModel(calls_per_turn=3, read_topics=False, read_sessions=1, edits=1, finish=False, **kw)


def wide(**kw: Any) -> ScriptedModel:
    return ScriptedModel(calls_per_turn=10, **kw)


def thinking_heavy(**kw: Any) -> ScriptedModel:
    return ScriptedModel(calls_per_turn=6, thinking=(6000, 6000), finish=False, **kw)


def _edits(call: dict[str, Any]) -> bool:
    return call["name"] == "memory" and call["input"].get("command") not in ("view", None)


def _first_text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "\n".join(b.get("text", "") for b in content)


def _result_texts(body: dict[str, Any]) -> list[str]:
    last = body["messages"][-1]["content"]
    return [b["content"] for b in last if isinstance(last, list) and isinstance(b, dict)
            and isinstance(b.get("content"), str)] if isinstance(last, list) else []


def _hints(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The next pages the last results point to, as a model following the `[more: ...]` lines would."""
    last = body["messages"][-1]
    found = []
    for block in last["content"] if isinstance(last["content"], list) else []:
        content = block.get("content") if isinstance(block, dict) else None
        content = content if isinstance(content, str) else json.dumps(content or block.get("text", ""))
        for sid, start in re.findall(r"read_session\(session_id='([^']+)', start=(\d+)\)", content):
            found.append(tool_use("read_session", session_id=sid, start=int(start), count=200))
        for path, start in re.findall(r"view (\S+) with view_range=\[(\d+), -1\]", content):
            found.append(memory("view", path=path, view_range=[int(start), -1]))
    return found
