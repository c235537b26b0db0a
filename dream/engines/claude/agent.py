"""The Claude engine: a forked agent that consolidates the staging copy through the Messages API.

One run is one conversation: the stable system prompt and tool definitions,
tonight's first message, then as many model turns as the model needs and the
budgets allow. The agent's only tools are the memory tool rooted at staging
and the read-only log tools; there is no shell and no network tool. Every
model call goes through `ClaudeEngine._request`, the one place a request is
made (a scheduler may wrap it).

How a turn ends (docs/claude-engine.md, "How a run ends"):

- tool_use blocks run whatever the stop reason (`tool_use`, `end_turn`,
  `stop_sequence`, `pause_turn`), and the conversation goes on;
- `pause_turn` without tool calls is sent back to be continued;
- a text-only reply before the model has done anything (a preamble), or one
  that asks a question, gets one nudge to go on; any other text-only reply
  is the final summary, after which the deterministic finish runs;
- a `finish` call ends the run on its summary once the reply's other calls
  have run, with no further request, unless one of them failed or it is the
  model's first act (`finish_tool.py`);
- `max_tokens` is retried once at twice the cap, its cut-off tool calls not
  run; cut off again, the run fails `max_tokens`;
- `refusal` and `model_context_window_exceeded` end it `failed`.

The first message always fits the model's window (`_fit`): each part of it
has a room in tokens counted per script (`budget.Room`, `tokens.py`; the
server's own count near the limit), and sessions past the room wait for the
next part of a dream in parts (`EngineResult.deferred`). After every batch of
calls the model is told the budget left, and past a soft limit asked to
finish. A re-read of what the conversation already carries is answered with
where it is (`rereads.py`).

Thinking is set on purpose (`thinking`, `effort`), and nothing already sent
is ever edited, so no thinking block is sent on a changed prefix; a long
conversation goes on in a fresh segment instead (`context.py`). Every failure
carries the usage spent so far, and the pipeline discards the staging copy.
A budget passed with work staged is not a failure: the run proposes what it
staged, marked partial, and the sessions it did not read wait for the next
run (`_stopped_short`); paid work is never thrown away. A 401 or 403 is the
user's configuration, not a failed run: `ConfigError`, exit 2, no backoff.

Secrets already in the memory files are hidden from the model and put back
where it keeps them (`secrets.py`): one table per engine instance, so a
marker means the same secret in the first message, every view and the
corrective turn.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import polars as pl
from anthropic.lib.tools import ToolError

from dream.engines.base import Change, EngineInput, EngineResult
from dream.engines.claude import context, provenance, tokens
from dream.engines.claude.budget import THINKING_ALLOWANCE, Budget, Limits, Room, session_page_chars
from dream.engines.claude.client import (
    MAX_RETRIES,
    MID_STREAM,
    Client,
    UnreadableReply,
    describe_connection,
    describe_status,
    make_client,
)
from dream.engines.claude.digest import SessionPart, session_digests, since_last_dream
from dream.engines.claude.finish import drop_notes, prune_staged
from dream.engines.claude.finish_tool import DECLARATION as FINISH_DECLARATION
from dream.engines.claude.finish_tool import NAME as FINISH
from dream.engines.claude.finish_tool import Ending
from dream.engines.claude.log_tools import make_log_tools
from dream.engines.claude.memory_tool import ROOT, StagingMemoryTool, declaration
from dream.engines.claude.models import takes_effort, thinking_param
from dream.engines.claude.paging import capped_result
from dream.engines.claude.pricing import prompt_tokens_for
from dream.engines.claude.prompts import instruction_section, render_dream, render_system
from dream.engines.claude.rereads import Rereads
from dream.engines.claude.secrets import SecretTable, without_numbers
from dream.engines.claude.transcript_tools import make_transcript_tools
from dream.engines.configured import require_configured
from dream.engines.instructions import load_instructions
from dream.errors import BudgetExceeded, ConfigError, EngineFailed, RunFailed
from dream.limits import model_call_slot
from dream.lint.signal import lint_signal
from dream.outcomes import Usage
from dream.store.layouts import named
from dream.store.tree import Tree

# Stop reasons that end a run with nothing proposed: (failure reason, what it means).
_FAILURES = {
    "max_tokens": ("max_tokens", "a reply was cut off at max_tokens twice, the second time at twice the cap"),
    "refusal": ("refusal", "the model declined to go on"),
    "model_context_window_exceeded": ("context", "the conversation outgrew the model's context window"),
}
_KNOWN = {"end_turn", "stop_sequence", "tool_use", "pause_turn", "compaction", "max_tokens", "refusal",
          "model_context_window_exceeded"}  # BetaStopReason of the SDK
_SENT_BACK = {"pause_turn", "compaction"}  # the server paused a long turn: send it back to be continued
# A turn paused this many times over with no tool call in between is a loop, not a long turn: without max_turns
# set, it would go on to the dollar ceiling.
MAX_PAUSES_IN_A_ROW = 10
SUMMARY_VERBS = ("merged", "updated", "created", "deleted", "dated", "pruned", "indexed", "repaired", "shortened")
NUDGE = ("Go on with tonight's dream: use the tools to do the four phases, without asking; a person reviews every "
         "change. Put anything you are unsure of under \"Needs a person\" in your final summary.")
ERROR_CHARS = 4_096  # of an unexpected tool failure's text in its result (the API's limit of a text field)
_CONFIGURATION = (401, 403)  # a key that is wrong or has no access: the user's configuration, never retried
FIT_TRIES = 4  # renderings of the first message, each smaller, until the count says it fits
SHRINK = 0.8  # the least a first message that did not fit shrinks by
ASK_SHARE = 0.5  # of the first request's room: past it, the server's count is asked for (the local one errs high)
SEGMENT_SHARE = 0.8  # of the model's prompt limit: a conversation this long goes on in a new segment


class ClaudeEngine:
    """The `claude` engine. One instance serves one run (consolidate, then maybe one correction)."""

    name = "claude"

    def __init__(self, client: anthropic.Anthropic | None = None) -> None:
        self._client = client
        self._budget: Budget | None = None
        self._limits = Limits(0, 0)
        self._transcript: list[dict[str, Any]] = []  # this segment's messages, for the corrective turn too
        self._first: dict[str, Any] | None = None  # the message every segment opens with
        self._done: list[str] = []  # the digest of the earlier segments
        self._calls: dict[str, str] = {}  # tool_use id -> the call in a line, for the digests
        self._previous_end: int | None = None  # messages the previous request of this segment sent
        self._opening = 0  # tokens of this segment's first request, as the API counted them
        self.refusals: list[str] = []  # tool calls the memory tool refused, across the run
        self._ended_on_final_reply = False  # the last conversation ended on a final reply, so it can go on
        self._secrets = SecretTable()  # memory secrets shown to the model as numbered markers
        self._rereads: Rereads | None = None  # what the conversation already carries (rereads.py)
        self._deferred: list[str] = []  # sessions left for a later run: past this part, or not read at a budget
        self._partial = ""  # why the run stopped at a budget with work staged
        self._window = 0  # the model's prompt limit, in tokens
        self._part_size: int | None = None  # sessions this run's part holds

    # -- the engine contract -----------------------------------------------------

    def consolidate(self, inp: EngineInput) -> EngineResult:
        inp, first_text = self._fit(inp)
        self._start(inp, first_text)
        return self._converse(inp, preamble_nudge=True)

    def correct(self, inp: EngineInput, problems: list[str]) -> EngineResult:
        """One corrective turn: tell the model what validation found, and let it fix the staging copy.

        On the instance that ran `consolidate`, the conversation goes on. On a
        fresh instance, a new conversation starts from the store as the first
        pass left it, with a fresh budget.
        """
        if self._partial:  # stopped at a budget: there is nothing left to spend on a correction
            return EngineResult(deferred=list(self._deferred), partial=self._partial)
        listed = "\n".join(f"- {self._secrets.hide(p)}" for p in problems) or "- (no details)"
        inp, first_text = self._fit(inp)  # the same part of the sessions as the first pass
        if self._budget is None or not self._ended_on_final_reply:  # never continue a cut-off conversation
            self._start(inp, first_text
                        + "\n\nAn earlier pass already did tonight's dream; the store above is its result. It does"
                        " not pass validation yet:\n"
                        f"{listed}\n\nFix exactly these problems with the memory tool, change nothing else, and"
                        " reply with a summary of your fixes.")
        else:
            self._append_user_text(
                "The store you left does not pass validation, so it cannot be proposed yet:\n"
                f"{listed}\n\nFix exactly these problems with the memory tool, then reply with your summary again."
            )
        return self._converse(inp)

    def _start(self, inp: EngineInput, first_text: str) -> None:
        self._budget = Budget(inp.settings)
        largest = max((len(d) for d in inp.staging.tree().values()), default=0)
        self._limits = Limits.for_store(inp.settings, largest)
        self._first = {"role": "user", "content": [{"type": "text", "text": first_text}]}
        self._transcript = [self._first]
        self._done, self._previous_end, self._opening = [], None, 0
        self._window = prompt_tokens_for(inp.settings.model, inp.settings.prices)
        self._rereads = Rereads(first_text, _entries(inp.sessions))
        self._rereads.remember_views(StagingMemoryTool(inp.staging.folder(), self._secrets))  # before any edit

    def _fit(self, inp: EngineInput) -> tuple[EngineInput, str]:
        """Tonight's first message within its room, and the input narrowed to the sessions it holds.

        The room shrinks until the count (the server's near the limit, else the
        local one) says the first request fits; the sessions past the room wait
        for the next part (`deferred`), and the tools see only this part's.
        After a run that failed at a budget or the window with nothing staged,
        `most_sessions` caps the part, oldest first.
        """
        room = Room.for_settings(inp.settings)
        client = self._client_for(inp.settings)
        for _ in range(FIT_TRIES):
            part = session_digests(inp.sessions, inp.catalog, room.sessions, room.session_chars, inp.most_sessions)
            text = self._dream_prompt(inp, room, part)
            size = self._first_request_tokens(client, inp, text, room.request)
            if size <= room.request:
                break
            room = room.scaled(min(SHRINK, room.request / size))
        self._deferred = list(part.deferred)
        self._part_size = len(part.digests)
        return _narrowed(inp, part), text

    def _first_request_tokens(self, client: anthropic.Anthropic, inp: EngineInput, text: str, room: int) -> int:
        """The first request's prompt tokens: the local count, or the server's when the local one nears `room`."""
        system = render_system(named(inp.settings.layout))
        params = {"model": inp.settings.model, "system": [{"type": "text", "text": system}],
                  "tools": self._toolbox(inp, StagingMemoryTool(inp.staging.folder(), self._secrets)).declarations(),
                  "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}]}
        local = tokens.estimate_request(params)
        if local <= room * ASK_SHARE:
            return local
        counted = tokens.count_request(client, params)
        return local if counted is None else counted

    def _toolbox(self, inp: EngineInput, memory: StagingMemoryTool) -> Toolbox:
        return Toolbox([memory, *make_log_tools(inp.sessions, inp.catalog, session_page_chars(inp.settings)),
                        *make_transcript_tools(inp.store_root, inp.settings)], inp.settings.memory_tool,
                       local_paths={inp.staging.folder(): ROOT, inp.store_root: "the store", Path.home(): "~"},
                       rereads=self._rereads)

    # -- one conversation ------------------------------------------------------

    def _converse(self, inp: EngineInput, preamble_nudge: bool = False) -> EngineResult:
        assert self._budget is not None
        before = inp.staging.tree()
        spent_before = Usage(**vars(self._budget.usage))
        memory = StagingMemoryTool(inp.staging.folder(), self._secrets)
        self._ended_on_final_reply = False
        try:
            final = self._conversation(inp, memory, preamble_nudge)
        except BudgetExceeded as err:
            if inp.staging.tree() == before:  # nothing staged: nothing to propose
                raise self._with_usage(err) from None
            final = self._stopped_short(err, inp)
        except RunFailed as err:
            raise self._with_usage(err) from None
        finally:
            self.refusals.extend(memory.refusals)
        self._ended_on_final_reply = not self._partial
        summary = without_numbers(final)  # the report names a kept secret's kind, never its number
        dropped = drop_notes(inp, before, summary)  # a note to self is neither the model's change nor kept
        after = inp.staging.tree()
        changes = describe_changes(before, after, summary)
        unsaid = provenance.attribute(changes, before, after, inp.sessions)  # what auto_accept may take alone
        done = dropped + prune_staged(inp, before)
        return EngineResult(changes=changes, summary=summary, usage=_minus(self._budget.usage, spent_before),
                            finish=done, needs_person=needs_a_person(summary) + unsaid,
                            deferred=list(self._deferred), partial=self._partial)

    def _stopped_short(self, err: BudgetExceeded, inp: EngineInput) -> str:
        """A run stopped at a budget with work staged: what it staged is proposed, partial, and what it did not
        read waits for the next run (paid work is never thrown away)."""
        assert self._rereads is not None
        unread = self._rereads.unread(list(_entries(inp.sessions)))
        self._deferred += [sid for sid in unread if sid not in self._deferred]
        self._partial = f"stopped at its budget before the model finished: {err}"
        waiting = f"{len(unread)} session(s) it did not read wait for the next run: {', '.join(unread)}" if unread \
            else "it had read every session of this part"
        return (f"Needs a person:\n- partial dream, {self._partial}; what it staged is proposed as it is, and "
                f"{waiting}")

    def _conversation(self, inp: EngineInput, memory: StagingMemoryTool, preamble_nudge: bool) -> str:
        """Turns until the final summary (a text-only reply, or an accepted `finish` call): tools run, a preamble
        or question is nudged once, a long run segments.

        `preamble_nudge`: a text-only first reply is a preamble, not a summary
        (a dream, not a corrective turn, where "nothing left to fix" is one).
        """
        client = self._client_for(inp.settings)
        tools = self._toolbox(inp, memory)
        nudged = False
        paused = 0  # pause_turn replies in a row (each also counts as a turn against max_turns)
        acted = not preamble_nudge  # the model has called a tool (a corrective turn needs not)
        while True:
            reply = self._reply(inp, client, tools)
            _fold_surrogates(reply)  # so that the reply can be sent back as history
            uses = [b for b in reply.content if getattr(b, "type", "") == "tool_use"]
            paused = 0 if uses else paused
            self._transcript.append({"role": "assistant", "content": [b.to_dict() for b in reply.content]})
            if uses:
                self._calls.update({u.id: context.describe_call(u.name, u.input) for u in uses})
                ending = self._run_calls(uses, tools, first_act=not acted, nudge=None if nudged else NUDGE)
                if ending is not None and ending.summary is not None:
                    return ending.summary  # nothing more is asked, so the results are never sent
                nudged = nudged or bool(ending and ending.premature)
                acted = acted or any(u.name != FINISH for u in uses)
                self._segment_if_long(reply.usage, self._transcript[-1])
            elif reply.stop_reason in _SENT_BACK:
                paused += 1
                if paused > MAX_PAUSES_IN_A_ROW:
                    raise EngineFailed(f"the model paused its turn {paused} times in a row without a tool call; "
                                       "nothing is proposed", reason="paused")
                continue
            elif not nudged and (not acted or _asks(reply)):
                nudged = True
                self._append_user_text(NUDGE)
            else:
                return _text_of(reply)

    def _run_calls(self, uses: list[Any], tools: Toolbox, first_act: bool, nudge: str | None) -> Ending | None:
        """Run a reply's calls, then weigh its finish call (if any) on their results; the results, in the order of
        the calls, become the next user message (kept even when the run ends, for a corrective turn)."""
        assert self._budget is not None
        finishes = [u for u in uses if u.name == FINISH]
        others = tools.run([u for u in uses if u.name != FINISH])
        ending = Ending.decide(finishes, others, first_act and len(finishes) == len(uses), nudge) if finishes else None
        by_id = {r["tool_use_id"]: r for r in others} | (ending.results if ending else {})
        left = {"type": "text", "text": self._budget.left()}  # the model plans its last turns knowing this
        self._transcript.append({"role": "user", "content": [*(by_id[u.id] for u in uses), left]})
        return ending

    def _segment_if_long(self, usage: Any, results: dict[str, Any]) -> None:
        """Past the trigger, the next request opens a fresh segment (nothing sent is edited).

        The next request carries the last one, its reply (as the API counted them, thinking included) and the
        `results` just appended: ten pages of sessions are 80K tokens the API has not counted yet.
        """
        size = context.context_size(usage) + context.estimate_tokens(results["content"])
        near_window = size > self._window * SEGMENT_SHARE  # the model's window binds before the growth does
        if context.mode_for() == "off" or (size <= self._opening + context.GROWTH and not near_window) \
                or self._first is None:
            return
        if self._rereads is not None:
            self._rereads.new_segment()
        *done, unseen = self._transcript[1:]
        self._done += [line for m in done for line in context.digest_lines(m, self._calls)]
        self._transcript = [context.open_segment(self._first, self._done, unseen, self._calls)]
        self._previous_end, self._opening = None, 0

    def _reply(self, inp: EngineInput, client: anthropic.Anthropic, tools: Toolbox) -> Any:
        """One whole reply, recorded and checked: a broken stream is asked for again, a cut-off reply once bigger."""
        assert self._budget is not None
        resumes, cap = 0, self._limits.max_tokens
        while True:
            self._budget.check(wants_more=False)  # a budget passed by the last reply stops the run before a request
            try:
                with model_call_slot(inp.settings):  # the fleet's shared limit on model calls (dream.limits)
                    reply = self._request(client, self._params(inp.settings, tools, cap))
            except anthropic.APIStatusError as err:
                if err.status_code == 200 and resumes < MAX_RETRIES:
                    resumes += 1  # an error event inside a reply that had started (overloaded mid-stream)
                    continue
                raise self._status_failure(err, client) from None
            except (anthropic.APIConnectionError, httpx2.TransportError, UnreadableReply) as err:
                self._raise_if_out_of_time()
                if isinstance(err, MID_STREAM) and resumes < MAX_RETRIES:
                    resumes += 1  # the SDK retries a request, not a stream cut half way: ask again here
                    continue
                raise EngineFailed(describe_connection(err, client), reason="api") from None
            except anthropic.AnthropicError as err:
                raise EngineFailed(f"the Anthropic SDK failed: {err}", reason="api") from None
            self._budget.record(reply.usage)
            self._opening = self._opening or context.context_size(reply.usage) - (reply.usage.output_tokens or 0)
            stop = reply.stop_reason
            if stop == "max_tokens" and cap < self._limits.retry_max_tokens:
                self._budget.check(wants_more=True)
                cap = self._limits.retry_max_tokens  # the cut reply is not kept: its last call may be half
                continue
            if stop in _FAILURES:
                reason, why = _FAILURES[stop]
                raise EngineFailed(f"the model stopped with {stop}: {why}; nothing is proposed", reason=reason)
            if stop not in _KNOWN:
                raise EngineFailed(f"the model stopped with {stop!r}, which dream does not know; nothing is proposed",
                                   reason="api")
            calls = [getattr(b, "name", "") for b in reply.content if getattr(b, "type", "") == "tool_use"]
            # a reply that wants another turn (tool calls, or a paused turn, whose continuations max_turns counts)
            # stops before its calls run if a budget is passed; one that ends the run is paid for: its calls run,
            # and any request after it is checked first
            if (calls and FINISH not in calls) or stop in _SENT_BACK:
                self._budget.check(wants_more=True)
            return reply

    def _params(self, settings: Any, tools: Toolbox, max_tokens: int) -> dict[str, Any]:
        """The request: system, tools, this segment's messages with their breakpoints, thinking and effort."""
        system = [{"type": "text", "text": render_system(named(settings.layout))}]  # the run resolved the layout
        messages = [dict(m, content=[dict(b) for b in m["content"]]) if isinstance(m.get("content"), list) else m
                    for m in self._transcript]
        context.breakpoints(system, messages, self._previous_end)
        self._previous_end = len(messages)
        params: dict[str, Any] = {"model": settings.model, "max_tokens": max_tokens, "system": system,
                                  "tools": tools.declarations(), "messages": messages}
        thinking = thinking_param(settings.model, settings.thinking, max_tokens, THINKING_ALLOWANCE)
        if thinking is not None:  # each model in the form it takes (models.toml): no 400 for a setting
            params["thinking"] = thinking
        if settings.effort != "none" and takes_effort(settings.model):
            params["output_config"] = {"effort": settings.effort}
        return params

    def _request(self, client: anthropic.Anthropic, params: dict[str, Any]) -> Any:
        """The one place a model call is made: stream one reply and return it whole.

        The wall clock is checked between events, so a trickling stream cannot
        outlast it. A stream that breaks off still cost its tokens: what its
        ``message_start`` (and any ``message_delta``) reported is recorded.
        """
        assert self._budget is not None
        with client.beta.messages.stream(**params) as stream:
            try:
                for _event in stream:
                    self._budget.check_time_left()
                reply = stream.get_final_message()
            except ValueError as err:  # the SDK could not parse the streamed tool input
                self._record_broken(stream)
                raise UnreadableReply(str(err)[:300]) from None
            except anthropic.APIConnectionError as err:  # anthropic >= 2.17 wraps a read that fails mid-stream
                self._record_broken(stream)
                raise UnreadableReply(f"the reply stream broke off: {err.__cause__ or err}"[:300]) from None
            except BaseException:
                self._record_broken(stream)
                raise
        if reply.stop_reason is None:  # the connection closed before message_stop: a cut, not a reply
            self._budget.record(reply.usage, whole=False)
            raise UnreadableReply("the reply stream ended before the reply did")
        return reply

    def _record_broken(self, stream: Any) -> None:
        assert self._budget is not None
        try:
            snapshot = stream.current_message_snapshot
        except (AssertionError, AttributeError, RuntimeError):
            return  # nothing had arrived: nothing was billed
        self._budget.record(snapshot.usage, whole=False)

    def _status_failure(self, err: anthropic.APIStatusError, client: anthropic.Anthropic) -> Exception:
        if err.status_code in _CONFIGURATION:
            return ConfigError(f"{describe_status(err, client)}; check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) "
                               "and the model's name, then run again"[:500])
        if err.status_code == 400 and "prompt is too long" in str(err.message).lower():
            return EngineFailed(f"the conversation outgrew the model's context window: {err.message}"[:500],
                                reason="context")
        return EngineFailed(describe_status(err, client), reason="api")

    # -- helpers ---------------------------------------------------------------

    def _with_usage(self, err: RunFailed) -> RunFailed:
        """Attach what the run spent, so a failed run's history still shows its tokens, and the sessions it took."""
        err.sessions = self._part_size
        return err.spent(Usage(**vars(self._budget.usage)) if self._budget else Usage())

    def _raise_if_out_of_time(self) -> None:
        """A request that timed out after the wall clock ran out is the timeout budget, not an API fault."""
        if self._budget is not None:
            self._budget.check_time_left()

    def _client_for(self, settings: Any) -> anthropic.Anthropic:
        """The SDK client: it reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself."""
        if self._client is None:
            require_configured("claude")
            self._client = make_client(settings.timeout_seconds)
        if isinstance(self._client, Client):
            self._client.budget = self._budget
        return self._client

    def _dream_prompt(self, inp: EngineInput, room: Room, part: SessionPart) -> str:
        hide = self._secrets.hide
        since = since_last_dream(inp.store_root, inp.staging.tree(), hide)
        staged = inp.staging.folder()
        return render_dream(staged, inp.catalog, inp.today, inp.settings.instructions, inp.sessions, since,
                            hide=hide, room=room, part=part, layout=named(inp.settings.layout)) + hide(lint_signal(_claims_within(inp.lint, room.lint))) \
            + hide(instruction_section(load_instructions(inp.store_root, inp.settings), room.lint))  # CLAUDE.md: lint's room

    def _append_user_text(self, text: str) -> None:
        """A user text turn; after a run that ended on `finish`, it follows the unsent results in their message."""
        block = {"type": "text", "text": text}
        last = self._transcript[-1] if self._transcript else None
        if last is not None and last["role"] == "user" and isinstance(last["content"], list):
            last["content"].append(block)
        else:
            if last is not None and last["role"] == "assistant":
                _drop_thinking_of_text_reply(last)
            self._transcript.append({"role": "user", "content": [block]})


class Toolbox:
    """The run's tools: how they are declared in a request, and running a reply's calls."""

    def __init__(self, tools: list[Any], memory_mode: str, local_paths: dict[Path, str] | None = None,
                 rereads: Rereads | None = None) -> None:
        self._tools = {t.name: t for t in tools}
        self._memory_mode = memory_mode
        # this machine's folders as the model may read them: no local path reaches a result (longest first)
        self._local_paths = sorted(((str(Path(p).resolve()), str(p), shown) for p, shown in (local_paths or {}).items()
                                    if len(Path(p).resolve().parts) > 1), key=lambda entry: -len(entry[0]))  # not "/"
        self._rereads = rereads

    def declarations(self) -> list[dict[str, Any]]:
        return [declaration(self._memory_mode) if name == "memory" else dict(t.to_dict())
                for name, t in self._tools.items()] + [FINISH_DECLARATION]

    def run(self, uses: list[Any]) -> list[dict[str, Any]]:
        """One tool_result per call, in order; a refused or failing call is an ``is_error`` result the model reads."""
        if self._rereads is not None:
            self._rereads.turn += 1
        return [self._run_one(use) for use in uses]

    def _run_one(self, use: Any) -> dict[str, Any]:
        tool = self._tools.get(use.name)
        if tool is None:
            return {"type": "tool_result", "tool_use_id": use.id, "is_error": True,
                    "content": f"Error: Tool {use.name!r} not found; the tools are {', '.join(self._tools)}"}
        try:
            content = _folded(capped_result(tool.call(use.input)))
            if self._rereads is not None:  # what the conversation already has: where it is, not the bytes again
                content = self._rereads.after(use, content, tool)
            return {"type": "tool_result", "tool_use_id": use.id, "content": content}
        except Exception as exc:  # noqa: BLE001 - a tool's failure is the model's to read, like a refusal
            return {"type": "tool_result", "tool_use_id": use.id, "is_error": True,
                    "content": self._without_local_paths(_error_content(exc))}

    def _without_local_paths(self, content: Any) -> Any:
        if not isinstance(content, str):
            return content
        for resolved, given, shown in self._local_paths:
            content = content.replace(resolved, shown).replace(given, shown)
        return content


def _asks(reply: Any) -> bool:
    """A text-only reply that ends on a question: the model waits for an answer nobody will give."""
    return _text_of(reply).rstrip().endswith("?")


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


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # each one becomes one U+FFFD
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


def _drop_thinking_of_text_reply(message: dict[str, Any]) -> None:
    """Leave out the thinking of a reply without tool calls that a user text answers (a preamble, a question, a
    summary sent back for a correction), before it is first sent back.

    The API needs thinking back only with the tool results of its turn (docs: extended thinking with tool use,
    "the only case where you have to return thinking blocks"); sent anyway, it is cache-written once and read
    by every later request: 0.01x the single-prompt bound on the reference store. It was never sent, so no
    prefix changes.
    """
    content = message["content"] if isinstance(message.get("content"), list) else []
    if any(b.get("type") == "tool_use" for b in content):
        return
    kept = [b for b in content if b.get("type") not in ("thinking", "redacted_thinking")]
    if kept:  # a message may not be empty
        message["content"] = kept


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
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_folded(k): _folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value


def _error_content(exc: Exception) -> Any:
    """A tool's failure as the model reads it: a refusal's own words, anything else by its `repr` (which keeps the
    type), cut to the API's 4,096-character limit of a text field and folded like every result."""
    if isinstance(exc, ToolError):
        content = _folded(exc.content)
        return content[:ERROR_CHARS] if isinstance(content, str) else content
    if isinstance(exc, OSError):  # its text names the file by this machine's path: the model gets the reason only
        return f"{type(exc).__name__}: {exc.strerror or 'the file system refused the operation'}"
    return _folded(repr(exc))[:ERROR_CHARS]


def _claims_within(claims: list[str], room: int) -> list[str]:
    """The lint claims that fit in `room` tokens, and a line saying how many more there are."""
    used = 0
    for i, claim in enumerate(claims):
        used += tokens.estimate(claim)
        if used > room:
            return [*claims[:i], f"… and {len(claims) - i} more claims, not shown for room: `dream lint` lists them"]
    return claims


def _entries(sessions: pl.DataFrame) -> dict[str, int]:
    """Each session's number of entries, in the frame's order."""
    if sessions.is_empty():
        return {}
    return {str(sid): frame.height for (sid,), frame in sessions.group_by("session", maintain_order=True)}


def _narrowed(inp: EngineInput, part: SessionPart) -> EngineInput:
    """`inp` with only the sessions of this part: the tools never show a session left for a later one."""
    if not part.deferred:
        return inp
    kept = [d.id for d in part.digests]
    return replace(inp, sessions=inp.sessions.filter(pl.col("session").cast(pl.Utf8).is_in(kept)),
                   catalog=[c for c in inp.catalog if str(getattr(c, "session_id", "")) in set(kept)])


def _minus(total: Usage, earlier: Usage) -> Usage:
    return Usage(**{k: v - getattr(earlier, k) for k, v in vars(total).items()})
