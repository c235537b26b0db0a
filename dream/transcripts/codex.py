"""Read a Codex session rollout (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``. The types that matter:

* ``session_meta`` — the session id and start time;
* ``response_item`` — what went to and came from the model: ``message``
  (user or assistant text), ``function_call`` / ``custom_tool_call`` /
  ``local_shell_call`` / ``web_search_call`` (one ``. `` line each), their
  outputs (not copied) and ``reasoning`` (never copied: it may be encrypted);
* ``event_msg`` — the UI's event stream; its ``user_message`` and
  ``agent_message`` events say exactly what the person typed and what the
  agent answered;
* ``compacted`` — a summary written when the context was compacted.

Recent Codex versions write each message twice (an ``event_msg`` and a
``response_item``), and their ``response_item`` user messages also carry
injected context (AGENTS.md, environment). So when a rollout has message
events, they are the source of what was said; older rollouts without them
fall back to ``response_item`` messages, minus the injected context. Rollouts
from before the ``payload`` wrapper (items at the top level) are read too.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from dream.transcripts.common import (
    SKIPPED,
    Entry,
    Session,
    as_dict,
    as_str,
    is_blank,
    iter_lines,
    make_entry,
    one_line,
    parse_json_line,
    parse_timestamp,
    summarize_arguments,
    tool_entry,
)

RESPONSE_ITEM_TYPES = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
     "custom_tool_call_output", "local_shell_call", "web_search_call", "ghost_snapshot"}
)
# Top-level types with nothing for an activity log.
IGNORED_TYPES = frozenset({"turn_context"})

# Outputs can be megabytes; their payload type is read from the first bytes so
# they are skipped unparsed. Only JSON structure can match (quotes in strings
# are escaped).
_HEAD_BYTES = 2048
_PAYLOAD_TYPE = re.compile(rb'"payload"\s*:\s*\{\s*"type"\s*:\s*"([a-z_]+)"')
_UNPARSED_PAYLOADS = frozenset(
    {b"function_call_output", b"custom_tool_call_output", b"reasoning", b"exec_command_end",
     b"token_count", b"agent_reasoning", b"turn_diff"}
)

_ROLLOUT_ID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_INJECTED_PREFIXES = (
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
    "<permissions instructions>", "<user_shell_command>",
)
_SHELLS = frozenset({"bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


def is_unparsed_line(line: bytes | bytearray, start: int, end: int) -> bool:
    """True if the record on ``line[start:end]`` is an output or reasoning, judged from its head."""
    head = _PAYLOAD_TYPE.search(line, start, min(end, start + _HEAD_BYTES))
    return bool(head and head.group(1) in _UNPARSED_PAYLOADS)


def session_id_from_name(path: Path) -> str | None:
    """The UUID at the end of ``rollout-<time>-<uuid>.jsonl``, if there is one."""
    found = _ROLLOUT_ID.search(path.stem)
    return found.group(1) if found else None


def read_session(path: Path, max_chars: int) -> Session:
    """Read one rollout file into a session."""
    named = session_id_from_name(path)
    reader = _Reader(Session(session_id=named or path.stem), max_chars, named_by_file=named is not None)
    for block, start, end in iter_lines(path, skip=is_unparsed_line, head=_HEAD_BYTES):
        reader.feed(block, start, end)
    reader.session.entries = reader.finish()
    return reader.session


class _Reader:
    def __init__(self, session: Session, max_chars: int, named_by_file: bool):
        self.session = session
        self.max_chars = max_chars
        self.named_by_file = named_by_file  # else session_meta's id names the session
        # (source, entry): source is "event" or "item" for messages, "tool" else
        self.tagged: list[tuple[str, Entry]] = []
        self.cwd: str | None = None

    def feed(self, data: bytearray, start: int, end: int) -> None:
        """Take the record on ``data[start:end]`` (`end` is `SKIPPED` for an output passed over)."""
        if end == SKIPPED:
            self.session.records += 1
            return
        if is_blank(data, start, end):
            return
        self.session.records += 1
        record = parse_json_line(data[start:end])
        if record is None:
            self.session.skipped += 1
            self.session.malformed += 1
            return
        if not self._record(record):
            self.session.skipped += 1

    def _record(self, record: dict) -> bool:
        """Handle one record; False if its type or shape is unknown."""
        kind = record.get("type")
        payload = record.get("payload")
        if self.session.started is None:
            self.session.started = parse_timestamp(record.get("timestamp"))
        if "payload" not in record:
            return self._legacy(record)
        if not isinstance(payload, dict):
            return False
        if kind == "session_meta":
            return self._meta(payload)
        if kind == "response_item":
            return self._item(payload)
        if kind == "event_msg":
            return self._event(payload)
        if kind == "compacted":
            self._summary(payload.get("message"))
            return True
        return kind in IGNORED_TYPES

    def _legacy(self, record: dict) -> bool:
        """Rollouts before the payload wrapper: a meta line, then bare items."""
        if "type" not in record and "id" in record:
            return self._meta(record)
        if record.get("record_type") == "state":
            return True
        if record.get("type") in RESPONSE_ITEM_TYPES:
            return self._item(record)
        return False

    def _meta(self, meta: dict) -> bool:
        if not self.named_by_file and isinstance(meta.get("id"), str):
            self.session.session_id = meta["id"]
        started = parse_timestamp(meta.get("timestamp"))
        if started is not None:
            self.session.started = started
        if isinstance(meta.get("cwd"), str):
            self.cwd = meta["cwd"]
        return True

    def _event(self, event: dict) -> bool:
        kind = event.get("type")
        if kind in ("user_message", "agent_message") and isinstance(event.get("message"), str):
            role = "user" if kind == "user_message" else "assistant"
            self._say("event", role, event["message"])
        return isinstance(kind, str)  # other events are the UI's business

    def _item(self, item: dict) -> bool:
        kind = item.get("type")
        if kind == "message":
            role = item.get("role")
            if role in ("user", "assistant"):
                self._say("item", role, message_text(item.get("content")))
            return True
        if kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            name, summary = summarize_call(item)
            self.tagged.append(("tool", tool_entry(name, summary, self.max_chars)))
            return True
        return kind in RESPONSE_ITEM_TYPES

    def _say(self, source: str, role: str, text: str) -> None:
        if text.strip():
            self.tagged.append((source, make_entry(role, text, self.max_chars)))  # type: ignore[arg-type]

    def _summary(self, text: Any) -> None:
        if isinstance(text, str) and text.strip():
            self.tagged.append(("tool", make_entry("assistant", "[summary] " + text, self.max_chars)))

    def finish(self) -> list[Entry]:
        """Pick one source of messages (see the module docstring)."""
        has_events = any(source == "event" for source, _ in self.tagged)
        entries = []
        for source, entry in self.tagged:
            if source == "item" and (has_events or entry.text.lstrip().startswith(_INJECTED_PREFIXES)):
                continue
            entries.append(entry)
        return entries


def message_text(content: Any) -> str:
    """The text of a response_item message (input_text / output_text blocks)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = [
        block["text"]
        for block in content
        if isinstance(block, dict) and block.get("type") in ("input_text", "output_text", "text")
        and isinstance(block.get("text"), str)
    ]
    return "\n".join(parts)


def summarize_call(item: dict) -> tuple[str, str]:
    """(tool name, argument hint) for a tool call item."""
    kind = item.get("type")
    if kind == "local_shell_call":
        action = as_dict(item.get("action"))
        return "shell", command_text(action.get("command"))
    if kind == "web_search_call":
        action = as_dict(item.get("action"))
        query = action.get("query")
        return "web_search", one_line(query) if isinstance(query, str) else ""
    name = as_str(item.get("name"), "tool")
    if kind == "custom_tool_call":
        raw = item.get("input")
        if not isinstance(raw, str):
            return name, ""
        files = _PATCH_FILE.findall(raw[:100_000])
        return name, (" ".join(f.strip() for f in files) if files else one_line(raw))
    return name, summarize_function_arguments(item.get("arguments"))


def summarize_function_arguments(raw: Any) -> str:
    """Arguments arrive as a JSON string; a shell command is shown as typed."""
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw)
        except ValueError:
            return one_line(raw)
    if isinstance(args, dict):
        command = args.get("cmd", args.get("command"))
        if command is not None:
            return command_text(command)
    return summarize_arguments(args)


def command_text(command: Any) -> str:
    """``["bash", "-lc", "ls"]`` → ``ls``; other argv lists are shell-joined."""
    if isinstance(command, str):
        return one_line(command)
    if not isinstance(command, list) or not all(isinstance(c, str) for c in command):
        return ""
    if len(command) == 3 and command[0] in _SHELLS and command[1] in ("-lc", "-c"):
        return one_line(command[2])
    return one_line(shlex.join(command))
