"""The mid-size reference store of issue #11: a 150-line index, 40 topic files of about 2 KB, 20 sessions of 20 KB.

Shared by bench/bench_claude_context.py and the Claude engine's tests (at a
smaller size where a test needs no more).
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

WORDS = ["deploy", "payout", "ledger", "webhook", "retry", "currency", "rounding", "migration", "replica", "decimal",
         "cache", "queue", "worker", "release", "freeze", "review", "approval", "staging", "prod", "dashboard",
         "latency", "settlement", "refund", "idempotency"]


# The same words in Japanese, for sessions the way a Japanese team writes them (about one token a character).
JAPANESE = ["デプロイ", "支払い", "台帳", "ウェブフック", "再試行", "通貨", "丸め", "移行", "レプリカ", "十進数",
            "キャッシュ", "キュー", "ワーカー", "リリース", "凍結", "レビュー", "承認", "ステージング", "本番",
            "ダッシュボード", "遅延", "決済", "返金", "冪等性"]


def filler(n_chars: int, seed: int, words: list[str] = WORDS) -> str:
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < n_chars:
        out.append(words[(i * 7 + len(out)) % len(words)])
        i += 1
    return ("、" if words is JAPANESE else " ").join(out)


def make_store(root: Path, topics: int = 40, sessions: int = 20, index_lines: int = 150,
               session_chars: int = 20_000, words: list[str] = WORDS) -> Path:
    """Write the store (with its logs) at `root` and return it."""
    root.mkdir(parents=True)
    lines = []
    for t in range(topics):
        body = "\n".join(f"- {filler(90, t * 31 + k)}" for k in range(20))
        (root / f"topic-{t:02d}.md").write_text(
            f"---\nname: topic {t}\ndescription: facts about area {t}\ntype: project\n---\n{body}\n")
        lines.append(f"- [Topic {t}](topic-{t:02d}.md) — {filler(60, t)}")
    lines += [f"- Rule {i}: {filler(80, i + 500)}" for i in range(max(0, index_lines - topics))]
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n")
    for s in range(sessions):
        day = date(2026, 11, 1 + s % 28) if sessions <= 28 else date(2025, 1, 1) + timedelta(days=s)
        folder = root / "logs" / f"{day:%Y}" / f"{day:%m}" / f"{day:%d}"
        folder.mkdir(parents=True, exist_ok=True)
        entries: list[str] = []
        while sum(len(e) for e in entries) < session_chars:
            k = len(entries)
            entries.append(f"> {filler(120, s * 100 + k, words)}\n" if k % 4 == 0
                           else f"< {filler(400, s * 100 + k, words)}\n")
        (folder / f"s{s:02d}-work-{s}.md").write_text("".join(entries))
    return root


def store_and_sessions_tokens(root: Path) -> int:
    """Characters / 4 of every memory file and every session: what a single prompt would send once."""
    return sum(len(p.read_text()) for p in root.rglob("*.md")) // 4
