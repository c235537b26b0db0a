"""The `finish` tool: the model ends the dream in the same reply as its last edits, saving a request.

A text-only summary costs one more request: the whole conversation is sent
again only for the model to say what it did. With `finish` the model puts that
summary in a tool call beside its last edits; the engine runs every call of
the reply and ends the run without asking for another reply (the API needs a
`tool_result` for each `tool_use` only in a request that follows it, and none
does). The text-only summary still works.

A finish is not taken when it would hide something (`Ending.decide`):

- a sibling call of the same reply failed or was refused: the results go back
  and the model goes on, as it would have to fix or drop that edit;
- the finish is the first thing the model does, before any other call (a dream
  needs the sessions read): one nudge, as for a text-only preamble;
- its input is not one non-empty `summary` string: an error result, go on.

It is a plain JSON-schema tool, so a Messages-compatible gateway that knows
only custom tools declares it as well (`memory_tool = "custom"`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NAME = "finish"
DECLARATION: dict[str, Any] = {
    "name": NAME,
    "description": (
        "End tonight's dream. Call it once, in the same reply as your last edits, with the summary you would "
        "otherwise reply with (one line per change, then any 'Needs a person:' section). Every call of that "
        "reply runs first; if one of them fails you get the results back and go on."
    ),
    "input_schema": {
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "the final summary, as described above"}},
        "required": ["summary"],
        "additionalProperties": False,
    },
}
ACCEPTED = "Finished: the summary is recorded and the dream ends here."


@dataclass
class Ending:
    """What a reply's finish call means: the summary to end on, or the result each finish call gets instead."""

    summary: str | None
    results: dict[str, dict[str, Any]]  # tool_use id -> its tool_result
    premature: bool = False  # a finish before anything else: the nudge case

    @classmethod
    def decide(cls, finishes: list[Any], sibling_results: list[dict[str, Any]], first_act: bool,
               nudge: str | None) -> Ending:
        """`first_act`: nothing was called before this reply and it calls nothing else; `nudge`: the nudge text
        when one may still be given (None once given, when a lone finish is the summary)."""
        failed = sum(1 for r in sibling_results if r.get("is_error"))
        summary = next((s for s in (_summary_of(f.input) for f in finishes) if s), None)
        if summary is None:
            why = "Error: finish takes one argument, summary: a non-empty string; nothing was finished"
        elif failed:
            why = (f"Not finished: {failed} of the other calls in this reply failed or were refused (see their "
                   "results). Fix or drop them, then call finish again with your summary.")
        elif first_act and nudge is not None:
            why = f"Not finished: nothing has been done yet. {nudge}"
        else:
            return cls(summary, {f.id: _result(f.id, ACCEPTED) for f in finishes})
        premature = summary is not None and not failed
        return cls(None, {f.id: _result(f.id, why, error=not premature) for f in finishes}, premature)


def _summary_of(input: Any) -> str | None:
    if isinstance(input, dict) and set(input) == {"summary"} and isinstance(input["summary"], str):
        return input["summary"].strip() or None
    return None


def _result(use_id: str, content: str, error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": use_id, "content": content}
    if error:
        result["is_error"] = True
    return result
