"""From a session's entries to the text of its activity log: redact, cut, format.

Secrets are redacted before a text is cut (see `REDACT_MARGIN`), many
sessions at once, since each call into polars has a fixed cost.
"""

from __future__ import annotations

from dream.redaction.redact import redact, redact_column, redact_following
from dream.transcripts.common import PREFIX, TOOL_SUMMARY_CHARS, Entry


def cut(text: str, length: int, max_chars: int) -> str:
    """`text` cut to `max_chars`, with a marker saying how much was left out."""
    if length <= max_chars and len(text) <= max_chars:
        return text
    return f"{text[:max_chars].rstrip()} […cut {length - max_chars} chars]"


def format_entry(prefix: str, text: str) -> str:
    """One entry as log lines: the prefix on the first line, two spaces after.

    Indenting continuation lines means a line of the text that itself starts
    with ``> ``, ``< `` or ``. `` can never be read as a new entry. Blank
    lines inside the text are dropped for the same reason: a reader may treat
    them as separators.
    """
    text = text.strip()
    if "\n" not in text and "\r" not in text:
        return prefix + text
    # A line is blank when nothing is left of it after rstrip.
    return prefix + "\n  ".join([kept for line in text.splitlines() if (kept := line.rstrip())])


def redact_texts(texts: list[str]) -> tuple[list[str], int]:
    """Redact many texts at once (Rust regex through polars: several times faster
    than one Python call per text, and the same result; tests/test_redact.py checks that)."""
    if not texts:
        return texts, 0
    import polars as pl  # start-up: polars costs ~0.15 s to import; `dream status --all` imports this module

    redacted, count = redact_column(pl.Series(texts, dtype=pl.Utf8))
    redacted, following = redact_following(redacted)  # "the password is", then the password alone
    count += following
    return (redacted.to_list() if count else texts), count


def render_log(entries: list[Entry], max_chars: int) -> tuple[str, int]:
    """The activity log text for `entries`, and how many secrets were redacted."""
    return render_logs([entries], max_chars)[0]


def render_logs(sessions: list[list[Entry]], max_chars: int) -> list[tuple[str, int]]:
    """`render_log` for many sessions, with one redaction pass over all their texts.

    A polars call has a fixed cost (about a millisecond on a busy machine);
    an import of hundreds of sessions pays it once instead of once per session.
    """
    texts = [entry.text for entries in sessions for entry in entries]
    redacted, total = redact_texts(texts)
    counts = _redactions_per_text(texts, redacted) if total else [0] * len(texts)
    rendered = []
    start = 0
    for entries in sessions:
        end = start + len(entries)
        rendered.append((_render_entries(entries, redacted[start:end], max_chars), sum(counts[start:end])))
        start = end
    return rendered


def _redactions_per_text(texts: list[str], redacted: list[str]) -> list[int]:
    """How many secrets each text had: recounted only where redaction changed it."""
    return [0 if after == before else max(1, redact(before)[1]) for before, after in zip(texts, redacted)]


def _render_entries(entries: list[Entry], texts: list[str], max_chars: int) -> str:
    """Log lines for entries whose texts are already redacted.

    The common cases of `cut` and `format_entry` are spelled out here: this
    loop runs once per entry of every imported session.
    """
    blocks: list[str] = []
    tool_chars = min(max_chars, TOOL_SUMMARY_CHARS)
    for entry, text in zip(entries, texts):
        if entry.kind == "tool":  # a short hint, cut after redaction
            # Already one line (`tool_entry`), and redaction only swaps a match for a marker.
            if len(text) > tool_chars:
                text = text[: tool_chars - 1] + "…"
        elif len(text) > max_chars or entry.length > max_chars:
            text = cut(text, entry.length + len(text) - len(entry.text), max_chars)
        if entry.sidechain:
            text = "[sidechain] " + text
        text = text.strip()
        if "\n" in text or "\r" in text:
            blocks.append(format_entry(PREFIX[entry.kind], text))
        else:
            blocks.append(PREFIX[entry.kind] + text)
    return "\n".join(blocks) + "\n" if blocks else ""
