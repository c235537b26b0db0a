"""Synthetic Claude Code and Codex transcripts, for tests and benchmarks.

The records follow the shapes the real agents write (see the fixtures in
``shared/transcripts/``), with the key order Claude Code uses, so that the
readers' fast paths are exercised the way real files exercise them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path


def iso(stamp: datetime) -> str:
    return stamp.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ClaudeSession:
    """Builds the records of one Claude Code session, one call per record."""

    def __init__(self, session_id: str, start: datetime, cwd: str = "/work/app"):
        self.session_id = session_id
        self.clock = start
        self.cwd = cwd
        self.records: list[dict] = []
        self._n = 0

    def _base(self, kind: str, sidechain: bool) -> dict:
        self._n += 1
        self.clock += timedelta(seconds=7)
        return {
            "parentUuid": f"{self.session_id}-{self._n - 1}" if self._n > 1 else None,
            "isSidechain": sidechain, "userType": "external", "cwd": self.cwd,
            "sessionId": self.session_id, "version": "2.0.14", "gitBranch": "main",
            "type": kind,
        }

    def _finish(self, record: dict) -> dict:
        record["uuid"] = f"{self.session_id}-{self._n}"
        record["timestamp"] = iso(self.clock)
        self.records.append(record)
        return record

    def user(self, text: str, sidechain: bool = False) -> dict:
        record = self._base("user", sidechain)
        record["message"] = {"role": "user", "content": text}
        return self._finish(record)

    def assistant(self, text: str, sidechain: bool = False, thinking: str | None = None) -> dict:
        record = self._base("assistant", sidechain)
        blocks = [{"type": "thinking", "thinking": thinking, "signature": "sig"}] if thinking else []
        blocks.append({"type": "text", "text": text})
        record["message"] = {"id": f"msg_{self._n}", "type": "message", "role": "assistant",
                             "model": "claude-sonnet-4-5", "content": blocks}
        return self._finish(record)

    def tool_use(self, name: str, args: dict, sidechain: bool = False) -> str:
        record = self._base("assistant", sidechain)
        tool_id = f"toolu_{self._n:06d}"
        record["message"] = {"id": f"msg_{self._n}", "type": "message", "role": "assistant",
                             "model": "claude-sonnet-4-5",
                             "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": args}]}
        self._finish(record)
        return tool_id

    def tool_result(self, tool_id: str, output: str, sidechain: bool = False) -> dict:
        record = self._base("user", sidechain)
        record["message"] = {"role": "user", "content": [
            {"tool_use_id": tool_id, "type": "tool_result", "content": output}]}
        record["toolUseResult"] = {"stdout": output, "stderr": "", "interrupted": False}
        return self._finish(record)

    def summary(self, text: str) -> dict:
        record = {"type": "summary", "summary": text, "leafUuid": f"{self.session_id}-{self._n}"}
        self.records.append(record)
        return record

    def raw(self, record: dict) -> dict:
        self.records.append(record)
        return record


class CodexSession:
    """Builds the records of one Codex rollout (current format, with events)."""

    def __init__(self, session_id: str, start: datetime, cwd: str = "/work/app"):
        self.session_id = session_id
        self.clock = start
        self.records: list[dict] = []
        self._add("session_meta", {"id": session_id, "timestamp": iso(start), "cwd": cwd,
                                   "originator": "codex_cli_rs", "cli_version": "0.46.0"})
        self._add("turn_context", {"cwd": cwd, "model": "gpt-5-codex", "approval_policy": "on-request"})

    def _add(self, kind: str, payload: dict) -> dict:
        self.clock += timedelta(seconds=3)
        record = {"timestamp": iso(self.clock), "type": kind, "payload": payload}
        self.records.append(record)
        return record

    def user(self, text: str) -> None:
        self._add("event_msg", {"type": "user_message", "message": text, "images": []})
        self._add("response_item", {"type": "message", "role": "user",
                                    "content": [{"type": "input_text", "text": text}]})

    def assistant(self, text: str) -> None:
        self._add("event_msg", {"type": "agent_message", "message": text})
        self._add("response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": text}]})

    def reasoning(self, secret_blob: str) -> None:
        self._add("response_item", {"type": "reasoning", "summary": [],
                                    "encrypted_content": secret_blob})

    def shell(self, command: str, output: str) -> None:
        call = f"call_{len(self.records)}"
        self._add("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                                    "arguments": json.dumps({"command": ["bash", "-lc", command]})})
        self._add("response_item", {"type": "function_call_output", "call_id": call,
                                    "output": json.dumps({"output": output, "metadata": {"exit_code": 0}})})

    def patch(self, files: Iterable[str]) -> None:
        body = "\n".join(f"*** Update File: {f}\n@@\n-old\n+new" for f in files)
        self._add("response_item", {"type": "custom_tool_call", "name": "apply_patch",
                                    "call_id": f"call_{len(self.records)}",
                                    "input": f"*** Begin Patch\n{body}\n*** End Patch"})


def write_jsonl(path: Path, records: Iterable[dict], append: bool = False) -> int:
    """Write records one per line (compact, UTF-8 as the agents do); return bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)
    raw = data.encode()
    with path.open("ab" if append else "wb") as fh:
        fh.write(raw)
    return len(raw)


_WORDS = ("build", "test", "cache", "index", "merge", "retry", "deploy", "parse", "token",
          "schema", "query", "route", "fixture", "timeout", "render", "queue")


def busy_claude_session(session_id: str, start: datetime, turns: int, tool_output_bytes: int,
                        seed: int = 0) -> ClaudeSession:
    """A realistic working session: each turn a request, a tool call, its output, an answer."""
    rng = random.Random(seed)
    session = ClaudeSession(session_id, start)
    output_line = "".join(rng.choice("abcdefghij klmnop\t\"{}\\") for _ in range(120)) + "\n"
    output = (output_line * (tool_output_bytes // len(output_line) + 1))[:tool_output_bytes]
    for turn in range(turns):
        words = " ".join(rng.choice(_WORDS) for _ in range(8))
        session.user(f"please {words} in step {turn}")
        tool = session.tool_use("Bash", {"command": f"pytest -q tests/test_{rng.choice(_WORDS)}.py",
                                         "description": "run tests"})
        session.tool_result(tool, output)
        session.assistant(f"Done with step {turn}: {words}.", thinking=f"thinking about {words}")
    return session
