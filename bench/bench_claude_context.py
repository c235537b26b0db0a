"""Benchmark: what one Claude dream reads, on the mid-size reference store of issue #11.

The store: a 150-line index, 40 topic files (about 2 KB each) and 20 new
sessions of about 20 KB each. A scripted agent (the fake Messages API of the
tests, on 127.0.0.1) reads each topic file and each session once, following
the `[more: ...]` paging hints, and makes 20 edits, several tool calls per
turn. The engine runs as it ships; the figures come from

* the server's count: the fake's usage per reply (uncached input, cache
  writes and cache reads; it honours the 1,024-token minimum, the 5-minute
  TTL and the 20-block lookback of prompt caching);
* characters / 4 of each request body as sent.

Two designs, the same agent:

* **before**: no cap on tool results, no clearing of used results (the
  whole history resent every turn, as the engine was before issue #11);
* **after/client**: results capped with paging hints, used results cleared
  on this side (the fallback for endpoints without the beta);
* **after/server**: the same caps, used results cleared by the server's
  context editing (``clear_tool_uses_20250919``, as the fake implements it).

Targets: input tokens per dream <= 600K, cache reads >= 70% of input,
peak context per turn <= 60K.

    python bench/bench_claude_context.py
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from datetime import date, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.fake_anthropic import FakeAnthropic, Reply, memory, text, tool_use

from dream.config import Settings
from dream.engines.claude import paging
from dream.engines.claude.pricing import estimate_cost
from dream.outcomes import Usage

TOPICS, SESSIONS, INDEX_LINES, EDITS = 40, 20, 150, 20
MODEL = "claude-sonnet-4-5"
WORDS = ["deploy", "payout", "ledger", "webhook", "retry", "currency", "rounding", "migration", "replica", "decimal", "cache", "queue", "worker", "release", "freeze", "review", "approval", "staging", "prod", "dashboard", "latency", "settlement", "refund", "idempotency"]


def filler(n_chars: int, seed: int) -> str:
    words, i = [], seed
    while sum(len(w) + 1 for w in words) < n_chars:
        words.append(WORDS[(i * 7 + len(words)) % len(WORDS)])
        i += 1
    return " ".join(words)


def make_store(root: Path) -> None:
    root.mkdir(parents=True)
    lines = []
    for t in range(TOPICS):
        body = "\n".join(f"- {filler(90, t * 31 + k)}" for k in range(20))
        (root / f"topic-{t:02d}.md").write_text(
            f"---\nname: topic {t}\ndescription: facts about area {t}\ntype: project\n---\n{body}\n")
        lines.append(f"- [Topic {t}](topic-{t:02d}.md) — {filler(60, t)}")
    lines += [f"- Rule {i}: {filler(80, i + 500)}" for i in range(INDEX_LINES - TOPICS)]
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
    for s in range(SESSIONS):
        day = date(2026, 11, 1 + s % 28)
        folder = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        folder.mkdir(parents=True, exist_ok=True)
        entries = []
        while sum(len(e) for e in entries) < 20_000:
            k = len(entries)
            entries.append(f"> {filler(120, s * 100 + k)}\n" if k % 4 == 0 else f"< {filler(400, s * 100 + k)}\n")
        (folder / f"s{s:02d}-work-{s}.md").write_text("".join(entries))


class ScriptedAgent:
    """Reads every topic and every session once (following paging hints), then edits, then sums up."""

    def __init__(self, session_ids: list[str]) -> None:
        self.reads: list[dict[str, Any]] = [memory("view", path=f"/memories/topic-{t:02d}.md") for t in range(TOPICS)]
        self.reads += [tool_use("read_session", session_id=sid, count=200) for sid in session_ids]
        self.edits = [memory("str_replace", path=f"/memories/topic-{e * 2 % TOPICS:02d}.md",
                             old_str=f"name: topic {e * 2 % TOPICS}\n",
                             new_str=f"name: topic {e * 2 % TOPICS}\nupdated: 2026-11-30\n") for e in range(EDITS)]
        self.done = False

    def __call__(self, body: dict[str, Any]) -> Reply:
        self.reads[:0] = self._hints(body)
        if self.reads:
            batch, self.reads = self.reads[:6], self.reads[6:]
            return Reply(batch, output_tokens=60 * len(batch))
        if self.edits:
            batch, self.edits = self.edits[:5], self.edits[5:]
            return Reply(batch, output_tokens=150 * len(batch))
        summary = "\n".join(f"- updated topic-{e * 2 % TOPICS:02d}.md: dated from the sessions" for e in range(EDITS))
        return Reply([text(summary)], output_tokens=400)

    @staticmethod
    def _hints(body: dict[str, Any]) -> list[dict[str, Any]]:
        last = body["messages"][-1]
        found = []
        for block in last["content"] if isinstance(last["content"], list) else []:
            content = block.get("content") if isinstance(block, dict) else None
            content = json.dumps(content) if not isinstance(content, str) else content
            for sid, start in re.findall(r"read_session\(session_id='([^']+)', start=(\d+)\)", content or ""):
                found.append(tool_use("read_session", session_id=sid, start=int(start), count=200))
            for path, start in re.findall(r"view (\S+) with view_range=\[(\d+), -1\]", content or ""):
                found.append(memory("view", path=path, view_range=[int(start), -1]))
        return found


def run_design(name: str, fake: FakeAnthropic, store: Path) -> dict[str, Any]:
    from dream.pipeline.run import run

    ids = sorted(p.stem.split("-")[0] for p in (store / "logs").rglob("*.md"))
    agent = ScriptedAgent(ids)
    fake.play(*[agent] * 200)
    fake.cache.clear()
    outcome = run(store, engine="claude", force=True, overrides={"model": MODEL, "max_turns": 100,
                                                                 "max_input_tokens": 50_000_000},
                  now=datetime(2026, 12, 1, 3).timestamp())
    per_request = [u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
                   for u in fake.usages]
    chars = [len(json.dumps(r, ensure_ascii=False)) // 4 for r in fake.requests]
    usage = Usage(input_tokens=sum(u["input_tokens"] for u in fake.usages),
                  output_tokens=sum(u["output_tokens"] for u in fake.usages),
                  cache_read_tokens=sum(u["cache_read_input_tokens"] for u in fake.usages),
                  cache_creation_tokens=sum(u["cache_creation_input_tokens"] for u in fake.usages))
    total = sum(per_request)
    return {
        "design": name, "status": str(outcome.status), "turns": len(fake.usages),
        "input_tokens": total, "cache_read_share": usage.cache_read_tokens / total if total else 0.0,
        "peak_context": max(per_request, default=0), "cost_usd": estimate_cost(MODEL, usage),
        "chars4_input": sum(chars), "chars4_peak": max(chars, default=0),
    }


def main() -> None:
    fake = FakeAnthropic().start()
    os.environ.update(ANTHROPIC_BASE_URL=fake.url, ANTHROPIC_API_KEY="sk-ant-bench")
    os.environ["DREAM_CONFIG"] = str(Path(tempfile.mkdtemp()) / "none.toml")
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cap = paging.capped.__defaults__
            designs = (("before", "off", 10**9), ("after/client", "client", paging.MAX_RESULT_CHARS),
                       ("after/server", "server", paging.MAX_RESULT_CHARS))
            for name, mode, limit in designs:
                os.environ["DREAM_CONTEXT_EDITING"] = mode
                paging.capped.__defaults__ = (limit,)
                store = Path(tmp) / name.replace("/", "-")
                make_store(store)
                rows.append(run_design(name, fake, store))
            paging.capped.__defaults__ = cap
    finally:
        fake.stop()
    print(f"reference store: {INDEX_LINES}-line index, {TOPICS} topic files, {SESSIONS} sessions of ~20 KB; "
          f"scripted agent: every topic and session read once, {EDITS} edits; priced as {MODEL}")
    print(f"{'design':12} {'status':9} {'turns':>5} {'input tok':>10} {'cache-read':>10} {'peak ctx':>9} "
          f"{'cost $':>7} | {'chars/4 in':>10} {'chars/4 peak':>12}")
    for r in rows:
        print(f"{r['design']:12} {r['status']:9} {r['turns']:5d} {r['input_tokens']:10,d} "
              f"{r['cache_read_share']:10.1%} {r['peak_context']:9,d} {r['cost_usd']:7.3f} | "
              f"{r['chars4_input']:10,d} {r['chars4_peak']:12,d}")
    print("targets: input <= 600,000 per dream, cache reads >= 70%, peak context <= 60,000")
    default, shipped = Settings(), next(r for r in rows if r["design"] == "after/client")
    print(f"default budgets against the shipped design: max_turns {default.max_turns} = "
          f"{default.max_turns / shipped['turns']:.1f}x its turns, max_input_tokens {default.max_input_tokens:,} = "
          f"{default.max_input_tokens / shipped['input_tokens']:.1f}x its input")


if __name__ == "__main__":
    main()
