"""The Claude engine: a forked agent that consolidates the staging copy through the Messages API.

One run is one conversation driven by the SDK's streaming tool runner: the
stable system prompt and tool definitions first, then tonight's first
message (all three cached), then as many model turns as the model needs and
the budgets allow. The agent's only tools are the memory tool rooted at
staging and the read-only log tools; there is no shell and no network tool.

A dream is proposed only after a final `end_turn` reply; then the
deterministic finish (`finish.py`) runs. `max_tokens`, `refusal` and
`model_context_window_exceeded` end the run `failed` with that reason, and
`pause_turn` is sent back to be continued. Tool results the model has used
leave the context (`context.py`). Every failure carries the usage spent so
far, and the pipeline discards the staging copy, so nothing partial is
proposed.

Secrets already in the memory files are hidden from the model and put back
where it keeps them (`secrets.py`): one table per engine instance, so a
marker means the same secret in the first message, every view and the
corrective turn.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import anthropic
import httpx2
from anthropic.lib.tools import BetaBuiltinFunctionTool, BetaFunctionTool
from anthropic.types.beta import BetaCacheControlEphemeralParam, BetaMessageParam, BetaTextBlockParam

from dream.engines.configured import require_configured
from dream.limits import each_call_gated
from dream.engines.base import Change, EngineInput, EngineResult
from dream.engines.claude import context
from dream.engines.claude.budget import Budget
from dream.engines.claude.client import (
    MAX_RETRIES,
    MID_STREAM,
    Client,
    UnreadableReply,
    describe_connection,
    describe_status,
    make_client,
)
from dream.engines.claude.digest import since_last_dream
from dream.engines.claude.finish import drop_unaccounted, prune_staged
from dream.engines.claude.log_tools import make_log_tools
from dream.engines.claude.memory_tool import StagingMemoryTool
from dream.engines.claude.prompts import render_dream, render_system
from dream.lint.signal import lint_signal
from dream.engines.claude.secrets import SecretTable, without_numbers
from dream.engines.claude.transcript_tools import make_transcript_tools
from dream.errors import EngineFailed, RunFailed
from dream.outcomes import Usage
from dream.store.tree import Tree, read_tree

CACHE: BetaCacheControlEphemeralParam = {"type": "ephemeral"}
# Stop reasons that end a run with nothing proposed: (failure reason, what it means).
_FAILURES = {
    "max_tokens": ("max_tokens", "a reply passed max_tokens_per_turn and was cut off"),
    "refusal": ("refusal", "the model declined to go on"),
    "model_context_window_exceeded": ("context", "the conversation outgrew the model's context window"),
}
_FINAL = {"end_turn", "stop_sequence"}  # the only replies a dream is proposed after
_GOES_ON = {"tool_use", "pause_turn", "compaction"}  # the runner runs the tools or sends the turn back
SUMMARY_VERBS = ("merged", "updated", "created", "deleted", "dated", "pruned", "indexed", "repaired", "shortened")


class ClaudeEngine:
    """The `claude` engine. One instance serves one run (consolidate, then maybe one correction)."""

    name = "claude"

    def __init__(self, client: anthropic.Anthropic | None = None) -> None:
        self._client = client
        self._budget: Budget | None = None
        self._transcript: list[BetaMessageParam] = []  # the conversation so far, for the corrective turn
        self.refusals: list[str] = []  # tool calls the memory tool refused, across the run
        self._ended_on_final_reply = False  # the last conversation ended on end_turn, so it can go on
        self._context_mode: str | None = None  # server | client (see context.py), fixed at the first request
        self._secrets = SecretTable()  # memory secrets shown to the model as numbered markers

    # -- the engine contract -----------------------------------------------------

    def consolidate(self, inp: EngineInput) -> EngineResult:
        self._budget = Budget(inp.settings)
        # A breakpoint after tonight's digest: every turn of the run reads it from the cache.
        first: BetaMessageParam = {"role": "user", "content": [
            {"type": "text", "text": self._dream_prompt(inp), "cache_control": CACHE}]}
        self._transcript = [first]
        return self._converse(inp)

    def correct(self, inp: EngineInput, problems: list[str]) -> EngineResult:
        """One corrective turn: tell the model what validation found, and let it fix the staging copy.

        On the instance that ran `consolidate`, the conversation goes on. On a
        fresh instance, a new conversation starts from the store as the first
        pass left it, with a fresh budget.
        """
        listed = "\n".join(f"- {self._secrets.hide(p)}" for p in problems) or "- (no details)"
        if self._budget is None or not self._ended_on_final_reply:  # never continue a cut-off conversation
            self._budget = Budget(inp.settings)
            first = (
                self._dream_prompt(inp)
                + "\n\nAn earlier pass already did tonight's dream; the store above is its result. It does not"
                " pass validation yet:\n"
                f"{listed}\n\nFix exactly these problems with the memory tool, change nothing else, and reply"
                " with a summary of your fixes."
            )
            self._transcript = [{"role": "user", "content": [{"type": "text", "text": first}]}]
        else:
            self._append_user_text(
                "The store you left does not pass validation, so it cannot be proposed yet:\n"
                f"{listed}\n\nFix exactly these problems with the memory tool, then reply with your summary again."
            )
        return self._converse(inp)

    # -- one conversation ------------------------------------------------------

    def _converse(self, inp: EngineInput) -> EngineResult:
        assert self._budget is not None
        before = read_tree(inp.staging)
        spent_before = Usage(**vars(self._budget.usage))
        memory = StagingMemoryTool(inp.staging, self._secrets)
        self._ended_on_final_reply = False
        try:
            final = self._run_tools(inp, memory)
        finally:
            self.refusals.extend(memory.refusals)
        self._ended_on_final_reply = True
        summary = without_numbers(_text_of(final))  # the report names a kept secret's kind, never its number
        dropped = drop_unaccounted(inp, before, summary)  # a scratch note is neither the model's change nor kept
        changes = describe_changes(before, read_tree(inp.staging), summary)
        done = dropped + prune_staged(inp)
        return EngineResult(changes=changes, summary=summary, usage=_minus(self._budget.usage, spent_before),
                            finish=done, needs_person=needs_a_person(summary))

    def _run_tools(self, inp: EngineInput, memory: StagingMemoryTool) -> Any:
        """Run the conversation to a final reply; a stream cut mid-reply resumes from the last whole turn."""
        assert self._budget is not None
        client = self._client_for(inp.settings)
        tools: list[BetaFunctionTool[Any] | BetaBuiltinFunctionTool] = [
            memory,
            *make_log_tools(inp.sessions, inp.catalog),
            *make_transcript_tools(inp.store_root, inp.settings),
        ]
        if self._context_mode is None:
            self._context_mode = context.mode_for()
        resumes = 0
        while True:
            try:
                return self._stream_turns(inp, client, tools)
            except RunFailed as err:
                raise self._with_usage(err) from None
            except anthropic.APIStatusError as err:
                if self._context_mode == "server" and context.is_unsupported(err):
                    self._context_mode = "client"  # the endpoint lacks the beta: clear on this side instead
                    continue
                if err.status_code == 200 and resumes < MAX_RETRIES:
                    resumes += 1  # an error event inside a reply that had started (overloaded mid-stream)
                    continue
                raise self._with_usage(self._status_failure(err, client)) from None
            except (anthropic.APIConnectionError, httpx2.TransportError, UnreadableReply) as err:
                self._raise_if_out_of_time()
                if isinstance(err, MID_STREAM) and resumes < MAX_RETRIES:
                    resumes += 1  # the SDK retries a request, not a stream cut half way: resume here
                    continue
                raise self._with_usage(EngineFailed(describe_connection(err, client), reason="api")) from None
            except anthropic.AnthropicError as err:
                raise self._with_usage(EngineFailed(f"the Anthropic SDK failed: {err}", reason="api")) from None

    def _stream_turns(self, inp: EngineInput, client: anthropic.Anthropic, tools: list[Any]) -> Any:
        """One streaming tool runner from the transcript so far, until a final reply."""
        assert self._budget is not None
        settings = inp.settings
        self._budget.check_time_left()
        system: list[BetaTextBlockParam] = [{"type": "text", "text": render_system(), "cache_control": CACHE}]
        extra: dict[str, Any] = {}
        if self._context_mode == "server":
            extra = {"context_management": context.server_param(), "betas": [context.BETA]}
        runner = client.beta.messages.tool_runner(
            model=settings.model,
            max_tokens=min(settings.max_tokens_per_turn, settings.max_output_tokens),
            system=system,
            tools=tools,
            messages=list(self._transcript),
            cache_control=CACHE,  # also cache the conversation so far, turn after turn
            thread=False,  # the whole (edited) history each turn, so any compatible endpoint can serve it
            stream=True,
            max_iterations=settings.max_turns + 1,
            **extra,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # "tool not found": the model gets an error result
            for stream in each_call_gated(runner, settings):  # the fleet's model-call limit (dream.limits)
                reply = self._read_stream(stream)
                if self._take_turn(runner, reply):
                    return reply
        raise EngineFailed("the model stopped without a final reply", reason="api")

    def _read_stream(self, stream: Any) -> Any:
        """The whole reply; the wall clock is checked between events, so a trickling stream cannot outlast it."""
        assert self._budget is not None
        try:
            for _event in stream:
                self._budget.check_time_left()
            reply = stream.get_final_message()
        except ValueError as err:  # the SDK could not parse the streamed tool input
            raise UnreadableReply(str(err)[:300]) from None
        if reply.stop_reason is None:  # the connection closed before message_stop: a cut, not a reply
            raise UnreadableReply("the reply stream ended before the reply did")
        return reply

    def _take_turn(self, runner: Any, reply: Any) -> bool:
        """Account for one reply, run its tools, and record both. True when the reply is the final one."""
        assert self._budget is not None
        self._budget.record(reply.usage)
        stop = reply.stop_reason
        if stop in _FAILURES:
            reason, why = _FAILURES[stop]
            raise EngineFailed(f"the model stopped with {stop}: {why}; nothing is proposed", reason=reason)
        if stop not in _FINAL | _GOES_ON:
            raise EngineFailed(f"the model stopped with {stop!r}, which dream does not know; nothing is proposed",
                               reason="api")
        wants_tools = stop == "tool_use"
        self._budget.check(wants_more=stop in _GOES_ON)
        if self._context_mode == "client" and wants_tools:
            # before the tools run: the runner adds their results after the history set here
            runner.set_messages_params(self._cleared)
        results = runner.generate_tool_call_response() if wants_tools else None  # cached: the runner sends these
        _fold_surrogates(reply)  # after the tools saw the input as sent, so the reply can be sent back
        self._transcript.append(reply.to_param())  # the same param the runner sends back
        if results is not None:
            self._transcript.append(results)
        # pause_turn: the server paused a long turn and the runner sends it back to be continued
        return stop in _FINAL

    def _cleared(self, params: Any) -> Any:
        """The runner's params with used results cleared; the transcript follows, so a resume stays small."""
        messages = context.clear_client_side(list(params["messages"]))
        self._transcript = list(messages)
        return {**params, "messages": messages}

    def _status_failure(self, err: anthropic.APIStatusError, client: anthropic.Anthropic) -> RunFailed:
        if err.status_code == 400 and "prompt is too long" in str(err.message).lower():
            return EngineFailed(f"the conversation outgrew the model's context window: {err.message}"[:500],
                                reason="context")
        return EngineFailed(describe_status(err, client), reason="api")

    # -- helpers ---------------------------------------------------------------

    def _with_usage(self, err: RunFailed) -> RunFailed:
        """Attach what the run spent, so a failed run's history still shows its tokens."""
        err.usage = Usage(**vars(self._budget.usage)) if self._budget else Usage()  # type: ignore[attr-defined]
        return err

    def _raise_if_out_of_time(self) -> None:
        """A request that timed out after the wall clock ran out is the timeout budget, not an API fault."""
        if self._budget is not None:
            try:
                self._budget.check_time_left()
            except RunFailed as err:
                raise self._with_usage(err) from None

    def _client_for(self, settings: Any) -> anthropic.Anthropic:
        """The SDK client: it reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself."""
        if self._client is None:
            require_configured("claude")
            self._client = make_client(settings.timeout_seconds)
        if isinstance(self._client, Client):
            self._client.budget = self._budget
        return self._client

    def _dream_prompt(self, inp: EngineInput) -> str:
        hide = self._secrets.hide
        since = since_last_dream(inp.store_root, read_tree(inp.staging), hide)
        return render_dream(inp.staging, inp.catalog, inp.today, inp.settings.instructions, inp.sessions, since,
                            hide=hide) + hide(lint_signal(inp.lint))

    def _append_user_text(self, text: str) -> None:
        self._transcript.append({"role": "user", "content": [{"type": "text", "text": text}]})


def describe_changes(before: Tree, after: Tree, summary: str) -> list[Change]:
    """What changed in staging, file by file, with the model's own reason where its summary gives one."""
    changes = []
    for path in sorted(before.keys() | after.keys()):
        if before.get(path) == after.get(path):
            continue
        action = "created" if path not in before else "deleted" if path not in after else "updated"
        line = _summary_line_for(path, summary)
        if line and action == "deleted" and line.lower().lstrip("-* ").startswith("merged"):
            action = "merged"
        reason = line or "changed by the model; its summary gives no reason for this file"
        changes.append(Change(action=action, path=path, reason=reason, source="claude"))
    return changes


_NEEDS_A_PERSON = re.compile(r"^[#*\s]*needs a person\b[*:\s]*$", re.IGNORECASE)


def needs_a_person(summary: str) -> list[str]:
    """The items of the summary's "Needs a person:" section: contradictions the model would not guess."""
    items: list[str] = []
    inside = False
    for line in summary.splitlines():
        stripped = line.strip()
        if _NEEDS_A_PERSON.match(stripped):
            inside = True
        elif inside and stripped.startswith(("-", "*")):
            items.append(stripped.lstrip("-* ").strip())
        elif inside and stripped:
            break
    return items


def _summary_line_for(path: str, summary: str) -> str:
    name = Path(path).name
    for line in summary.splitlines():
        text = line.strip().lstrip("-* ").strip()
        if (path in text or name in text) and text.lower().startswith(SUMMARY_VERBS):
            return text
    for line in summary.splitlines():
        if path in line or name in line:
            return line.strip().lstrip("-* ").strip()
    return ""


def _text_of(message: Any) -> str:
    return "\n".join(b.text for b in message.content if getattr(b, "type", "") == "text").strip()


def _fold_surrogates(reply: Any) -> None:
    """Replace unpaired surrogates in the reply's text and tool input with U+FFFD.

    JSON can carry them, Python strings can hold them, but UTF-8 cannot, so the
    SDK could not send such a reply back as history and the run would die.
    """
    for block in reply.content:
        if getattr(block, "type", "") == "text":
            block.text = _folded(block.text)
        elif getattr(block, "type", "") == "tool_use":
            block.input = _folded(block.input)


def _folded(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_folded(k): _folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value


def _minus(total: Usage, earlier: Usage) -> Usage:
    return Usage(**{k: v - getattr(earlier, k) for k, v in vars(total).items()})
